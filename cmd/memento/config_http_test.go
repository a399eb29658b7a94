package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHTTPConfig checks that serve's HTTP settings come from MEMENTO_*
// variables and flags, flags winning, and that bad values are refused
// with a message naming the setting.
func TestHTTPConfig(t *testing.T) {
	m := NewMain()
	env := map[string]string{
		"MEMENTO_ALLOWED_ORIGINS":   "https://app.example.com, http://localhost:3000",
		"MEMENTO_ALLOWED_HOSTS":     "memento.lan",
		"MEMENTO_HTTP_READ_TIMEOUT": "20s",
		"MEMENTO_HTTP_IDLE_TIMEOUT": "1m",
		"MEMENTO_HTTP_MAX_CONNS":    "64",
		"MEMENTO_MAX_QUEUE_LAG":     "90s",
	}
	m.Getenv = func(k string) string { return env[k] }
	if err := m.ParseFlags(context.Background(), []string{"serve", "--allowed-hosts", "a.lan,b.lan:8443", "--http-write-timeout", "3m"}); err != nil {
		t.Fatal(err)
	}
	want := HTTPConfig{
		AllowedOrigins:    "https://app.example.com, http://localhost:3000",
		AllowedHosts:      "a.lan,b.lan:8443",
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       20 * time.Second,
		WriteTimeout:      3 * time.Minute,
		IdleTimeout:       time.Minute,
		MaxConns:          64,
		MaxQueueLag:       90 * time.Second,
	}
	if diff := cmp.Diff(want, m.Config.HTTP); diff != "" {
		t.Errorf("HTTP config (-want +got):\n%s", diff)
	}
	if got, want := splitList(m.Config.HTTP.AllowedOrigins), []string{"https://app.example.com", "http://localhost:3000"}; !cmp.Equal(got, want) {
		t.Errorf("origins = %q, want %q", got, want)
	}

	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{args: []string{"serve", "--allowed-origins", "*"}, want: "--allowed-origins"},
		{args: []string{"serve"}, env: map[string]string{"MEMENTO_ALLOWED_ORIGINS": "app.example.com"}, want: "MEMENTO_ALLOWED_ORIGINS"},
		{args: []string{"serve", "--allowed-hosts", "http://memento.lan"}, want: "--allowed-hosts"},
		{args: []string{"serve"}, env: map[string]string{"MEMENTO_HTTP_READ_TIMEOUT": "soon"}, want: "MEMENTO_HTTP_READ_TIMEOUT"},
		{args: []string{"serve", "--http-read-timeout", "0s"}, want: "--http-read-timeout"},
		{args: []string{"serve", "--http-idle-timeout=-1s"}, want: "--http-idle-timeout"},
		{args: []string{"serve", "--http-write-timeout", "2h"}, want: "--http-write-timeout"},
		{args: []string{"serve", "--http-read-timeout", "5s", "--http-read-header-timeout", "6s"}, want: "--http-read-header-timeout"},
		{args: []string{"serve", "--http-max-conns", "0"}, want: "--http-max-conns"},
		{args: []string{"serve", "--max-queue-lag", "-1s"}, want: "--max-queue-lag"},
		{args: []string{"serve"}, env: map[string]string{"MEMENTO_MAX_QUEUE_LAG": "soon"}, want: "MEMENTO_MAX_QUEUE_LAG"},
	}
	for _, tt := range tests {
		m := NewMain()
		m.Getenv = func(k string) string { return tt.env[k] }
		err := m.ParseFlags(context.Background(), tt.args)
		if err == nil || !strings.Contains(message(err), tt.want) {
			t.Errorf("ParseFlags(%v, env %v) = %v, want an error naming %s", tt.args, tt.env, err, tt.want)
		}
	}
}
