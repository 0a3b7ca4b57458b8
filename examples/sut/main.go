// Command sut is a small device-fleet backend for fleetbench's examples: devices register,
// push data that is stored as one database row per push, and fetch their config, the way
// Dwarfguard's daemon behind Apache and MariaDB does in seed 000. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "ts=%s level=error msg=%q\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), err.Error())
		os.Exit(1)
	}
}

func run() error {
	cfg, err := configFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	var store Store
	backend := "memory"
	if cfg.DatabaseURL == "" {
		store = newMemStoreKeeping(cfg.PushHistory)
	} else {
		sqlS, err := openSQL(cfg.DatabaseURL, cfg.DBMaxConns)
		if err != nil {
			return err
		}
		store, backend = sqlS, sqlS.dialect
	}
	defer store.Close()

	srv := NewServer(cfg, store, os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	tp, shutdownTracing, err := newTracerProvider(ctx, os.Getenv)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	srv.SetTracerProvider(tp)
	defer func() {
		// Flush the last batch of spans: the slowest requests end a run.
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdownTracing(sctx); err != nil {
			srv.log.Log(context.Background(), slog.LevelWarn, "flushing spans failed", "err", err.Error())
		}
	}()
	if tracingEnabled(os.Getenv) {
		srv.log.Info("exporting traces over OTLP/HTTP")
	}
	srv.log.Info("starting", "listen", cfg.Listen, "store", backend, "database", redact(cfg.DatabaseURL),
		"workers", cfg.Workers, "queue_size", cfg.QueueSize, "crash_after_pushes", cfg.CrashAfterPushes, "slow_path", cfg.SlowPath)
	if backend == "memory" {
		srv.log.Info("no DATABASE_URL: keeping devices and the last pushes in memory")
	}
	go srv.Start(ctx)

	httpSrv := &http.Server{
		Addr:              cfg.Listen,
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 2)
	go func() { errc <- httpSrv.ListenAndServe() }()
	if cfg.GRPCListen != "" {
		srv.log.Info("serving the goal-state gRPC service", "listen", cfg.GRPCListen)
		go func() { errc <- srv.serveGRPC(ctx, cfg.GRPCListen) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		srv.log.Log(context.Background(), slog.LevelWarn, "shutdown incomplete", "err", err.Error())
	}
	return nil
}
