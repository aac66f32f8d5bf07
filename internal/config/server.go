package config

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// Server is the HTTP API and dashboard. Port 0 means off.
type Server struct {
	Host      string `json:"host"`
	Port      int    `json:"port"`
	AuthToken string `json:"auth_token"` // secret
}

const (
	// DefaultServerHost is server.host unless the file says.
	DefaultServerHost = "127.0.0.1"
	// InitServerPort is the port `drover init` writes (server.port defaults to 0, off).
	InitServerPort = 4840
)

func decodeServer(d *decoder, n *yaml.Node) Server {
	s := Server{Host: DefaultServerHost}
	f := d.fields(n, "server", []string{"host", "port", "auth_token"}, lenient)
	if v, ok := f["host"]; ok {
		if h := d.str(v, "server.host", expandPlain); h != "" {
			s.Host = h
		}
	}
	if v, ok := f["port"]; ok {
		if x, ok := d.integer(v, "server.port"); ok {
			if x < 0 || x > 65535 {
				d.errf(deref(v), "server.port", "%d is out of range; use 1-65535, or 0 to turn the server off", x)
			} else {
				s.Port = x
			}
		}
	}
	s.AuthToken = d.str(f["auth_token"], "server.auth_token", expandSecret)
	if s.Port != 0 && s.AuthToken == "" && !isLoopback(s.Host) {
		d.warnf("server.host", "%s is reachable from other machines and server.auth_token is empty: anyone who can reach it can move cards", s.Host)
	}
	return s
}

func isLoopback(h string) bool {
	return h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}
