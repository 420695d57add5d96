/**
 * The service: one handler per RPC of the generated `ServiceService`. Each
 * GraphQL root field is an RPC (`getProject` -> `queryGetProject`); the
 * request carries the field's arguments and the response one field named
 * after it. Projects live in memory for as long as the process runs.
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type ServiceImpl } from '@connectrpc/connect';
import { ProjectSchema, ProjectStatus, ServiceService, type Project } from './gen/service/v1/service_pb.js';

/** Projects by id, in creation order. */
export class ProjectStore {
  private readonly projects = new Map<string, Project>();
  private nextId = 1;

  constructor(seed: ReadonlyArray<{ name: string; description?: string; status?: ProjectStatus }> = []) {
    for (const project of seed) this.create(project.name, project.description, project.status);
  }

  list(): Project[] {
    return [...this.projects.values()];
  }

  get(id: string): Project | undefined {
    return this.projects.get(id);
  }

  create(name: string, description?: string, status = ProjectStatus.ACTIVE): Project {
    const now = new Date().toISOString();
    const project = create(ProjectSchema, { id: String(this.nextId++), name, description, status, createdAt: now, updatedAt: now });
    this.projects.set(project.id, project);
    return project;
  }

  update(id: string, changes: { name?: string; description?: string; status?: ProjectStatus }): Project | undefined {
    const project = this.projects.get(id);
    if (!project) return undefined;
    if (changes.name !== undefined) project.name = changes.name;
    if (changes.description !== undefined) project.description = changes.description;
    // UNSPECIFIED (0) is what the router sends when the client left the status out.
    if (changes.status !== undefined && changes.status !== ProjectStatus.UNSPECIFIED) project.status = changes.status;
    project.updatedAt = new Date().toISOString();
    return project;
  }
}

/** The RPC handlers over a store. */
export function projectService(store: ProjectStore): ServiceImpl<typeof ServiceService> {
  return {
    queryGetProject(request) {
      // Leaving the field unset answers `null` in GraphQL.
      return { getProject: store.get(request.id) };
    },
    queryListProjects() {
      return { listProjects: store.list() };
    },
    mutationCreateProject(request) {
      const name = request.input?.name.trim();
      if (!name) throw new ConnectError('a project needs a name', Code.InvalidArgument);
      return { createProject: store.create(name, request.input?.description) };
    },
    mutationUpdateProject(request) {
      const input = request.input;
      if (input?.name !== undefined && input.name.trim() === '') throw new ConnectError('a project needs a name', Code.InvalidArgument);
      const project = store.update(request.id, { name: input?.name, description: input?.description, status: input?.status });
      if (!project) throw new ConnectError(`project ${request.id} not found`, Code.NotFound);
      return { updateProject: project };
    },
  };
}

/** Registers the service on a Connect router (gRPC, gRPC-Web and Connect protocols). */
export function routes(store: ProjectStore): (router: ConnectRouter) => void {
  return (router) => router.service(ServiceService, projectService(store));
}
