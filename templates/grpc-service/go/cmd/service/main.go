// Command service serves the gRPC service on HTTP/2 without TLS (h2c), which
// is what the router dials: routing_url dns:///localhost:50051 in
// router.compose.yaml. Environment: PORT (default 50051), HOST (default localhost).
package main

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"__GO_MODULE__/pkg/generated/service/v1/servicev1connect"
	"__GO_MODULE__/pkg/service"
)

func main() {
	port := getenv("PORT", "50051")
	host := getenv("HOST", "localhost")

	mux := http.NewServeMux()
	path, handler := servicev1connect.NewServiceServiceHandler(service.New(service.Seed()))
	mux.Handle(path, handler)

	server := &http.Server{
		Addr:              net.JoinHostPort(host, port),
		Handler:           h2c.NewHandler(mux, &http2.Server{}),
		ReadHeaderTimeout: 10 * time.Second,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()

	log.Printf("gRPC service listening on %s", server.Addr)
	if err := server.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func getenv(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}
