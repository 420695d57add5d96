// Package service implements the generated ServiceService: one method per
// RPC. Each GraphQL root field is an RPC (getProject -> QueryGetProject); the
// request carries the field's arguments and the response one field named
// after it. Projects live in memory for as long as the process runs.
package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	servicev1 "__GO_MODULE__/pkg/generated/service/v1"
	"__GO_MODULE__/pkg/generated/service/v1/servicev1connect"
)

// Service keeps projects in memory.
type Service struct {
	mu       sync.Mutex
	projects []*servicev1.Project
	nextID   int
}

var _ servicev1connect.ServiceServiceHandler = (*Service)(nil)

// Seed returns the projects a new service starts with.
func Seed() []*servicev1.Project {
	return []*servicev1.Project{
		{Name: "Switchyard", Description: wrapperspb.String("A federated GraphQL router"), Status: servicev1.ProjectStatus_PROJECT_STATUS_ACTIVE},
		{Name: "Playground", Status: servicev1.ProjectStatus_PROJECT_STATUS_INACTIVE},
	}
}

// New returns a service holding the given projects (ids and timestamps are assigned).
func New(seed []*servicev1.Project) *Service {
	s := &Service{nextID: 1}
	for _, project := range seed {
		s.add(project)
	}
	return s
}

func (s *Service) add(project *servicev1.Project) *servicev1.Project {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	project.Id = strconv.Itoa(s.nextID)
	project.CreatedAt = now
	project.UpdatedAt = now
	s.nextID++
	s.projects = append(s.projects, project)
	return project
}

func (s *Service) find(id string) *servicev1.Project {
	for _, project := range s.projects {
		if project.GetId() == id {
			return project
		}
	}
	return nil
}

// QueryGetProject answers getProject(id); an unset project answers null.
func (s *Service) QueryGetProject(_ context.Context, req *connect.Request[servicev1.QueryGetProjectRequest]) (*connect.Response[servicev1.QueryGetProjectResponse], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	response := &servicev1.QueryGetProjectResponse{}
	if project := s.find(req.Msg.GetId()); project != nil {
		response.GetProject = proto.Clone(project).(*servicev1.Project)
	}
	return connect.NewResponse(response), nil
}

// QueryListProjects answers listProjects.
func (s *Service) QueryListProjects(_ context.Context, _ *connect.Request[servicev1.QueryListProjectsRequest]) (*connect.Response[servicev1.QueryListProjectsResponse], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	projects := make([]*servicev1.Project, 0, len(s.projects))
	for _, project := range s.projects {
		projects = append(projects, proto.Clone(project).(*servicev1.Project))
	}
	return connect.NewResponse(&servicev1.QueryListProjectsResponse{ListProjects: projects}), nil
}

// MutationCreateProject answers createProject(input).
func (s *Service) MutationCreateProject(_ context.Context, req *connect.Request[servicev1.MutationCreateProjectRequest]) (*connect.Response[servicev1.MutationCreateProjectResponse], error) {
	input := req.Msg.GetInput()
	name := strings.TrimSpace(input.GetName())
	if name == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("a project needs a name"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	project := s.add(&servicev1.Project{Name: name, Description: input.GetDescription(), Status: servicev1.ProjectStatus_PROJECT_STATUS_ACTIVE})
	return connect.NewResponse(&servicev1.MutationCreateProjectResponse{CreateProject: proto.Clone(project).(*servicev1.Project)}), nil
}

// MutationUpdateProject answers updateProject(id, input); fields left out keep their value.
func (s *Service) MutationUpdateProject(_ context.Context, req *connect.Request[servicev1.MutationUpdateProjectRequest]) (*connect.Response[servicev1.MutationUpdateProjectResponse], error) {
	input := req.Msg.GetInput()
	if input.GetName() != nil && strings.TrimSpace(input.GetName().GetValue()) == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("a project needs a name"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	project := s.find(req.Msg.GetId())
	if project == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("project %s not found", req.Msg.GetId()))
	}
	if input.GetName() != nil {
		project.Name = input.GetName().GetValue()
	}
	if input.GetDescription() != nil {
		project.Description = input.GetDescription()
	}
	// UNSPECIFIED is what the router sends when the client left the status out.
	if input.GetStatus() != servicev1.ProjectStatus_PROJECT_STATUS_UNSPECIFIED {
		project.Status = input.GetStatus()
	}
	project.UpdatedAt = time.Now().UTC().Format(time.RFC3339Nano)
	return connect.NewResponse(&servicev1.MutationUpdateProjectResponse{UpdateProject: proto.Clone(project).(*servicev1.Project)}), nil
}
