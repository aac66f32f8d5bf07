package store

import "testing"

func TestRedactDSN(t *testing.T) {
	for in, want := range map[string]string{
		// No password: unchanged.
		"sqlite:/x/drover.db":                   "sqlite:/x/drover.db",
		"sqlite:drover.db?_pragma=busy_timeout": "sqlite:drover.db?_pragma=busy_timeout",
		"postgres://drover@db:5432/drover":      "postgres://drover@db:5432/drover",
		"postgres://db/drover?sslmode=disable":  "postgres://db/drover?sslmode=disable",
		"host=db user=drover dbname=drover":     "host=db user=drover dbname=drover",
		"":                                      "",
		// URL userinfo.
		"postgres://drover:s3cret@db:5432/drover":            "postgres://drover:****@db:5432/drover",
		"postgres://drover:p%40ss@db/drover?sslmode=require": "postgres://drover:****@db/drover?sslmode=require",
		"postgres://drover:s3c@ret@db/drover":                "postgres://drover:****@db/drover",
		"postgres://drover:bad%zzescape@db/drover":           "postgres://drover:****@db/drover",
		// Query string.
		"postgres://db/drover?password=s3cret":                 "postgres://db/drover?password=****",
		"postgres://db/drover?sslmode=disable&password=s3cret": "postgres://db/drover?sslmode=disable&password=****",
		"postgres://db/drover?PASSWORD=s3cret&user=drover":     "postgres://db/drover?PASSWORD=****&user=drover",
		// Keyword/value.
		"host=db user=drover password=s3cret dbname=drover": "host=db user=drover password=**** dbname=drover",
		"host=db password = 's3 cret\\' x' dbname=drover":   "host=db password = **** dbname=drover",
		"host=db sslpassword=keypass":                       "host=db sslpassword=****",
		// Both forms at once.
		"postgres://drover:a@db/drover?password=b": "postgres://drover:****@db/drover?password=****",
	} {
		if got := RedactDSN(in); got != want {
			t.Errorf("RedactDSN(%q) = %q, want %q", in, got, want)
		}
	}
}
