package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Seed 001's goal-state messages over gRPC: fleetbench.sut.v1.GoalState/Push takes a
// GoalStateRequest {agent int64, payload bytes} and answers GoalStateReply {agent, accepted}.
// The service is described in code (no protoc step) and served with reflection, so k6's
// k6/net/grpc client connects with { reflect: true }. Goal states share the bounded push workers
// (WORKERS, QUEUE_SIZE, QUEUE_TIMEOUT, PUSH_DELAY) with HTTP pushes.
const (
	goalStateService = "fleetbench.sut.v1.GoalState"
	goalStatePush    = "/" + goalStateService + "/Push"
)

// goalStateDescriptors registers the service's file once and returns its two messages.
func goalStateDescriptors() (req, reply protoreflect.MessageDescriptor, err error) {
	const file = "fleetbench/sut/v1/goalstate.proto"
	fd, err := protoregistry.GlobalFiles.FindFileByPath(file)
	if err != nil {
		field := func(name string, n int32, t descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
			return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(n), Type: t.Enum(),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
		}
		fd, err = protodesc.NewFile(&descriptorpb.FileDescriptorProto{
			Name: proto.String(file), Package: proto.String("fleetbench.sut.v1"), Syntax: proto.String("proto3"),
			MessageType: []*descriptorpb.DescriptorProto{
				{Name: proto.String("GoalStateRequest"), Field: []*descriptorpb.FieldDescriptorProto{
					field("agent", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64), field("payload", 2, descriptorpb.FieldDescriptorProto_TYPE_BYTES)}},
				{Name: proto.String("GoalStateReply"), Field: []*descriptorpb.FieldDescriptorProto{
					field("agent", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64), field("accepted", 2, descriptorpb.FieldDescriptorProto_TYPE_BOOL)}},
			},
			Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("GoalState"), Method: []*descriptorpb.MethodDescriptorProto{{
				Name: proto.String("Push"), InputType: proto.String(".fleetbench.sut.v1.GoalStateRequest"), OutputType: proto.String(".fleetbench.sut.v1.GoalStateReply")}}}},
		}, protoregistry.GlobalFiles)
		if err != nil {
			return nil, nil, err
		}
		if err := protoregistry.GlobalFiles.RegisterFile(fd); err != nil {
			return nil, nil, err
		}
	}
	msgs := fd.Messages()
	return msgs.ByName("GoalStateRequest"), msgs.ByName("GoalStateReply"), nil
}

// GRPCServer serves the goal-state service and reflection.
func (s *Server) GRPCServer() (*grpc.Server, error) {
	reqDesc, replyDesc, err := goalStateDescriptors()
	if err != nil {
		return nil, fmt.Errorf("goal-state service: %w", err)
	}
	gs := grpc.NewServer()
	gs.RegisterService(&grpc.ServiceDesc{
		ServiceName: goalStateService,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Push", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := dynamicpb.NewMessage(reqDesc)
			if err := dec(in); err != nil {
				return nil, err
			}
			return s.goalState(ctx, in, replyDesc)
		}}},
		Metadata: "fleetbench/sut/v1/goalstate.proto",
	}, struct{}{})
	reflection.Register(gs)
	return gs, nil
}

// goalState takes a push worker as an HTTP push does, and answers once it has been handled.
func (s *Server) goalState(ctx context.Context, in *dynamicpb.Message, replyDesc protoreflect.MessageDescriptor) (proto.Message, error) {
	start := time.Now()
	release, code := s.acquire(ctx)
	if code != 0 {
		s.count("goalstate", "unavailable", time.Since(start))
		return nil, status.Error(codes.Unavailable, "push workers saturated")
	}
	defer release()
	if s.cfg.PushDelay > 0 {
		time.Sleep(s.cfg.PushDelay)
	}
	s.goalStates.Add(1)
	agent := in.Get(in.Descriptor().Fields().ByName("agent"))
	out := dynamicpb.NewMessage(replyDesc)
	out.Set(replyDesc.Fields().ByName("agent"), agent)
	out.Set(replyDesc.Fields().ByName("accepted"), protoreflect.ValueOfBool(true))
	s.count("goalstate", "ok", time.Since(start))
	return out, nil
}

// serveGRPC serves gRPC on addr until ctx ends.
func (s *Server) serveGRPC(ctx context.Context, addr string) error {
	gs, err := s.GRPCServer()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		gs.GracefulStop()
	}()
	return gs.Serve(ln)
}
