package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// The burn-down runs on a tiny size in both settings and reports what it
// measured (not how fast: speed is the benchmark's business).
func TestBurnDownSQLite(t *testing.T) {
	for _, name := range []string{"tuned", "default"} {
		t.Run(name, func(t *testing.T) {
			o := options{backend: "sqlite", dir: t.TempDir(), setting: name, synchronous: "NORMAL", jobs: 20, timeout: time.Minute}
			if err := o.check(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := run(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Jobs != 20 || res.Setting != name || res.Workers != settings[name].workers || res.WallS <= 0 || res.JobsPerS <= 0 {
				t.Errorf("result %+v: want 20 jobs of setting %s with %d workers and a positive wall time and rate", res, name, settings[name].workers)
			}
		})
	}
}

func TestBurnDownPostgres(t *testing.T) {
	dsn := os.Getenv("DROVER_TEST_POSTGRES_URL")
	if dsn == "" {
		t.Skip("set DROVER_TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/test) to run River on PostgreSQL")
	}
	o := options{backend: "postgres", dsn: dsn, setting: "tuned", jobs: 20, timeout: time.Minute}
	res, err := run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Backend != "postgres" || res.JobsPerS <= 0 {
		t.Errorf("result %+v", res)
	}
}

// riverVersion, which the JSON reports, is the version go.mod pins.
func TestRiverVersionPinned(t *testing.T) {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "github.com/riverqueue/river "+riverVersion+"\n") {
		t.Errorf("go.mod does not pin github.com/riverqueue/river %s; update riverVersion with go.mod", riverVersion)
	}
}

func TestOptionsRefused(t *testing.T) {
	for _, o := range []options{
		{backend: "mysql", setting: "tuned", synchronous: "NORMAL", jobs: 1},
		{backend: "postgres", setting: "tuned", synchronous: "NORMAL", jobs: 1},
		{backend: "sqlite", setting: "fast", synchronous: "NORMAL", jobs: 1},
		{backend: "sqlite", setting: "tuned", synchronous: "NORMAL", jobs: 0},
		{backend: "sqlite", setting: "tuned", synchronous: "sometimes", jobs: 1},
	} {
		if err := o.check(); err == nil {
			t.Errorf("%+v: accepted", o)
		}
	}
}
