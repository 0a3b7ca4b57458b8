package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// sqlStore keeps devices and pushes in PostgreSQL (pgx) or MariaDB/MySQL (go-sql-driver).
type sqlStore struct {
	db      *sql.DB
	dialect string // "postgres" or "mysql"
}

// openSQL opens (lazily: nothing is dialled yet) the database named by a
// postgres://, postgresql:// or mysql:// URL.
func openSQL(rawURL string, maxConns int) (*sqlStore, error) {
	driver, dsn, dialect, err := parseDatabaseURL(rawURL)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	if maxConns > 0 {
		db.SetMaxOpenConns(maxConns)
		db.SetMaxIdleConns(maxConns)
	}
	db.SetConnMaxLifetime(30 * time.Minute)
	return &sqlStore{db: db, dialect: dialect}, nil
}

// parseDatabaseURL maps DATABASE_URL to a database/sql driver name and DSN.
func parseDatabaseURL(rawURL string) (driver, dsn, dialect string, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", "", "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		return "pgx", rawURL, "postgres", nil
	case "mysql", "mariadb":
		cfg := mysql.NewConfig()
		if u.User != nil {
			cfg.User = u.User.Username()
			cfg.Passwd, _ = u.User.Password()
		}
		cfg.Net = "tcp"
		host, port := u.Hostname(), u.Port()
		if host == "" {
			host = "127.0.0.1"
		}
		if port == "" {
			port = "3306"
		}
		cfg.Addr = net.JoinHostPort(host, port)
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		cfg.ParseTime = true
		cfg.Timeout = 5 * time.Second
		if q := u.Query(); len(q) > 0 {
			// Extra parameters (tls=..., charset=...) go through the driver's own parser.
			base, sep := cfg.FormatDSN(), "?"
			if strings.Contains(base, "?") {
				sep = "&"
			}
			parsed, perr := mysql.ParseDSN(base + sep + q.Encode())
			if perr != nil {
				return "", "", "", fmt.Errorf("DATABASE_URL parameters: %w", perr)
			}
			cfg = parsed
		}
		return "mysql", cfg.FormatDSN(), "mysql", nil
	case "":
		return "", "", "", fmt.Errorf("DATABASE_URL %q has no scheme (want postgres:// or mysql://)", redact(rawURL))
	}
	return "", "", "", fmt.Errorf("DATABASE_URL scheme %q not supported (want postgres:// or mysql://)", u.Scheme)
}

// redact hides the password of a URL for logs.
func redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

func (s *sqlStore) Init(ctx context.Context) error {
	var stmts []string
	if s.dialect == "postgres" {
		stmts = []string{
			`CREATE TABLE IF NOT EXISTS devices (
				device        VARCHAR(128) PRIMARY KEY,
				config        JSONB,
				registered_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
			`CREATE TABLE IF NOT EXISTS pushes (
				id          BIGSERIAL PRIMARY KEY,
				device      VARCHAR(128) NOT NULL,
				payload     JSONB NOT NULL,
				received_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
			`CREATE INDEX IF NOT EXISTS pushes_device ON pushes (device, received_at)`,
		}
	} else {
		stmts = []string{
			`CREATE TABLE IF NOT EXISTS devices (
				device        VARCHAR(128) NOT NULL PRIMARY KEY,
				config        JSON NULL,
				registered_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))`,
			`CREATE TABLE IF NOT EXISTS pushes (
				id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
				device      VARCHAR(128) NOT NULL,
				payload     JSON NOT NULL,
				received_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
				INDEX pushes_device (device, received_at))`,
		}
	}
	for _, q := range stmts {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// q rewrites ? placeholders to $n for PostgreSQL.
func (s *sqlStore) q(query string) string {
	if s.dialect != "postgres" {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func nullJSON(v json.RawMessage) any {
	if v == nil {
		return nil
	}
	return string(v)
}

func (s *sqlStore) Register(ctx context.Context, device string, config json.RawMessage) (bool, error) {
	insert := `INSERT INTO devices (device, config) VALUES (?, ?) ON CONFLICT (device) DO NOTHING`
	if s.dialect == "mysql" {
		insert = `INSERT IGNORE INTO devices (device, config) VALUES (?, ?)`
	}
	res, err := s.db.ExecContext(ctx, s.q(insert), device, nullJSON(config))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	if n == 0 && config != nil {
		// Re-registration with a config replaces the stored one.
		if _, err := s.db.ExecContext(ctx, s.q(`UPDATE devices SET config = ? WHERE device = ?`), string(config), device); err != nil {
			return false, err
		}
	}
	return n > 0, nil
}

func (s *sqlStore) Known(ctx context.Context, device string) (bool, error) {
	var one int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT 1 FROM devices WHERE device = ?`), device).Scan(&one)
	if err == sql.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

func (s *sqlStore) Push(ctx context.Context, device string, payload json.RawMessage) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO pushes (device, payload) VALUES (?, ?)`), device, string(payload))
	return err
}

func (s *sqlStore) Config(ctx context.Context, device string) (json.RawMessage, error) {
	var cfg sql.NullString
	err := s.db.QueryRowContext(ctx, s.q(`SELECT config FROM devices WHERE device = ?`), device).Scan(&cfg)
	if err == sql.ErrNoRows || (err == nil && !cfg.Valid) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return json.RawMessage(cfg.String), nil
}

// countPushes is for tests: how many rows the device has.
func (s *sqlStore) countPushes(ctx context.Context, device string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM pushes WHERE device = ?`), device).Scan(&n)
	return n, err
}

func (s *sqlStore) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

func (s *sqlStore) Close() error { return s.db.Close() }
