import { memoryCache } from './fixtures.js';
import { invalidationSuite } from './invalidation-suite.js';

invalidationSuite('the memory provider', { cache: () => memoryCache, tagsFollowLatestWrite: true });
