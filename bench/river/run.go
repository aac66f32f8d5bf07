package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite"
)

// noopArgs is the job: it does nothing.
type noopArgs struct {
	N int `json:"n"`
}

func (noopArgs) Kind() string { return "noop" }

type noopWorker struct {
	river.WorkerDefaults[noopArgs]
}

func (*noopWorker) Work(context.Context, *river.Job[noopArgs]) error { return nil }

// insertBatch is how many jobs one InsertMany carries (River's benchmark
// inserts in batches of 5,000 too).
const insertBatch = 5000

func run(ctx context.Context, o options) (Result, error) {
	s := settings[o.setting]
	res := Result{Tool: "river", RiverVersion: riverVersion, Backend: o.backend, Setting: o.setting, Jobs: o.jobs,
		Workers: s.workers, FetchCooldownMS: ms(s.cooldown), FetchPollMS: ms(s.poll)}
	if o.backend == "sqlite" {
		res.Synchronous = o.synchronous
		pool, cleanup, err := openSQLite(ctx, o.dir, o.synchronous)
		if err != nil {
			return res, err
		}
		defer cleanup()
		return burnDown(ctx, riversqlite.New(pool), "", s, o.jobs, res)
	}
	pool, schema, cleanup, err := openPostgres(ctx, o.dsn)
	if err != nil {
		return res, err
	}
	defer cleanup()
	return burnDown(ctx, riverpgxv5.New(pool), schema, s, o.jobs, res)
}

// burnDown migrates River's tables, inserts jobs no-op jobs, then starts a
// client and times it from Start to the last job's completion event.
func burnDown[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], schema string, s setting, jobs int, res Result) (Result, error) {
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema, Logger: quiet()})
	if err != nil {
		return res, err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return res, fmt.Errorf("migrating River's tables: %w", err)
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{})
	cfg := &river.Config{Schema: schema, Logger: quiet(), Workers: workers,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: s.workers}}}
	if !s.defaultCooldown {
		cfg.FetchCooldown, cfg.FetchPollInterval = s.cooldown, s.poll
	}
	client, err := river.NewClient(driver, cfg)
	if err != nil {
		return res, err
	}
	start := time.Now()
	batch := make([]river.InsertManyParams, 0, insertBatch)
	for i := 0; i < jobs; i += insertBatch {
		batch = batch[:0]
		for j := i; j < min(jobs, i+insertBatch); j++ {
			batch = append(batch, river.InsertManyParams{Args: noopArgs{N: j}})
		}
		if _, err := client.InsertMany(ctx, batch); err != nil {
			return res, fmt.Errorf("inserting jobs: %w", err)
		}
	}
	res.InsertS = time.Since(start).Seconds()

	events, cancel := client.SubscribeConfig(&river.SubscribeConfig{ChanSize: jobs + 1,
		Kinds: []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled}})
	defer cancel()
	start = time.Now()
	if err := client.Start(ctx); err != nil {
		return res, err
	}
	var last time.Time
	for done := 0; done < jobs; done++ {
		select {
		case ev := <-events:
			if ev == nil {
				return res, errors.New("River closed its event channel before every job completed")
			}
			if ev.Kind != river.EventKindJobCompleted {
				return res, fmt.Errorf("job %d: %s, want completed", ev.Job.ID, ev.Kind)
			}
			last = time.Now()
		case <-ctx.Done():
			return res, fmt.Errorf("%d of %d jobs completed: %w", done, jobs, ctx.Err())
		}
	}
	stopCtx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	if err := client.Stop(stopCtx); err != nil {
		return res, fmt.Errorf("stopping the client: %w", err)
	}
	wall := last.Sub(start)
	res.WallS = wall.Seconds()
	res.JobsPerS = float64(jobs) / wall.Seconds()
	return res, nil
}

// openSQLite opens a new database file in a scratch directory under dir with
// one connection, as River's CLI does (River's SQLite driver wants one), in
// WAL mode as River's CLI sets it, with the given synchronous pragma.
func openSQLite(ctx context.Context, dir, synchronous string) (*sql.DB, func(), error) {
	d, err := os.MkdirTemp(dir, "river-bench-")
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(d, "river.db")
	pool, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous("+synchronous+")")
	if err != nil {
		os.RemoveAll(d)
		return nil, nil, err
	}
	pool.SetMaxOpenConns(1)
	var mode string
	if err := pool.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		pool.Close()
		os.RemoveAll(d)
		return nil, nil, fmt.Errorf("sqlite journal_mode is %q, want wal (%v)", mode, err)
	}
	return pool, func() { pool.Close(); os.RemoveAll(d) }, nil
}

// openPostgres creates a scratch schema in dsn's database and a pool on it;
// cleanup drops the schema.
func openPostgres(ctx context.Context, dsn string) (*pgxpool.Pool, string, func(), error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, "", nil, fmt.Errorf("connecting to --dsn: %w", err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("river_bench_%d", rand.Int64N(1<<62))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return nil, "", nil, err
	}
	drop := func() {
		if c, err := pgx.Connect(context.Background(), dsn); err == nil {
			c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		drop()
		return nil, "", nil, err
	}
	return pool, schema, func() { pool.Close(); drop() }, nil
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
