/**
 * An answer that depends on who asks in a way the subgraphs' own caching
 * headers cannot show: the authorization plugin removes fields per caller,
 * so two callers asking the same thing of the same subgraphs get different
 * answers. A plugin that knows sets this key; whatever writes the client's
 * `Cache-Control` (the response cache plugin) then says `private`, so no
 * shared cache (a CDN, a proxy) hands one caller's answer to another.
 */
import { StateKey } from './state.js';

export const privateAnswer = new StateKey<true>('private-answer');
