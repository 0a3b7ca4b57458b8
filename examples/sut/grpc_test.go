package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// grpcClient serves s's gRPC service on loopback and dials it.
func grpcClient(t *testing.T, s *Server) *grpc.ClientConn {
	t.Helper()
	gs, err := s.GRPCServer()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln) //nolint:errcheck // stopped below
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func pushGoalState(ctx context.Context, conn *grpc.ClientConn, agent int64) (*dynamicpb.Message, error) {
	reqDesc, replyDesc, err := goalStateDescriptors()
	if err != nil {
		return nil, err
	}
	req := dynamicpb.NewMessage(reqDesc)
	req.Set(reqDesc.Fields().ByName("agent"), protoreflect.ValueOfInt64(agent))
	req.Set(reqDesc.Fields().ByName("payload"), protoreflect.ValueOfBytes([]byte("goal state")))
	reply := dynamicpb.NewMessage(replyDesc)
	return reply, conn.Invoke(ctx, goalStatePush, req, reply)
}

// TestGoalStateOverGRPC: a goal state is answered with its agent and accepted, counted in
// /metrics; reflection lists the service, as k6's { reflect: true } needs.
func TestGoalStateOverGRPC(t *testing.T) {
	s, ts, _ := newTestServer(t, testConfig(), newMemStore())
	conn := grpcClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for agent := range int64(3) {
		reply, err := pushGoalState(ctx, conn, 2600+agent)
		if err != nil {
			t.Fatal(err)
		}
		f := reply.Descriptor().Fields()
		if reply.Get(f.ByName("agent")).Int() != 2600+agent || !reply.Get(f.ByName("accepted")).Bool() {
			t.Errorf("reply %v", reply)
		}
	}
	_, metrics := do(t, "GET", ts.URL+"/metrics", "")
	for _, want := range []string{"sut_goal_states_total 3\n", `sut_http_requests_total{route="goalstate",status="ok"} 3` + "\n"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, svc := range resp.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	if !strings.Contains(strings.Join(names, ","), goalStateService) {
		t.Errorf("reflection lists %v, not %s", names, goalStateService)
	}
}

// TestGoalStatesShareTheWorkers: with every worker busy and no queue, a goal state is refused
// with Unavailable, as an HTTP push gets 503.
func TestGoalStatesShareTheWorkers(t *testing.T) {
	cfg := testConfig()
	cfg.Workers, cfg.QueueSize = 1, 0
	store := &blockingStore{memStore: newMemStore(), entered: make(chan struct{}, 1), release: make(chan struct{})}
	s, ts, _ := newTestServer(t, cfg, store)
	conn := grpcClient(t, s)
	done := make(chan int, 1)
	go func() { code, _ := do(t, "POST", ts.URL+"/api/push", `{"device":"d"}`); done <- code }()
	<-store.entered // the one worker is busy with the HTTP push
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := pushGoalState(ctx, conn, 1); status.Code(err) != codes.Unavailable {
		t.Errorf("goal state with every worker busy: %v, want Unavailable", err)
	}
	close(store.release)
	if code := <-done; code != 202 {
		t.Errorf("push = %d", code)
	}
}
