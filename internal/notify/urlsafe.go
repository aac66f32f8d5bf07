package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// Config keys named in errors.
const (
	keySlackURL     = "notify.slack.url"
	keyWebhookURL   = "notify.webhook.url"
	keyAllowPrivate = "notify.allow_private"
)

// URLError says why a notification URL is refused. It never contains the URL
// itself (notification URLs carry secrets), only the host.
type URLError struct {
	Key    string // the config key, e.g. notify.webhook.url
	Host   string
	Reason string
	Fix    string
}

func (e *URLError) Error() string {
	s := e.Key + ": " + e.Reason
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// privateFix is the advice when a URL points inside the network.
const privateFix = "point it at a public address, or set " + keyAllowPrivate + ": true to allow private and loopback receivers"

// CheckURL refuses a webhook URL that is not http(s), or whose host is (or
// resolves to) a loopback, private, link-local, shared (CGNAT), multicast or
// unspecified address, unless allowPrivate. Errors name notify.webhook.url;
// CheckConfig checks both channels with their own keys. Delivery checks the
// connected address again (DNS may change between this check and then).
func CheckURL(raw string, allowPrivate bool) error {
	return checkURL(keyWebhookURL, raw, allowPrivate)
}

// CheckConfig checks every configured notification URL (see CheckURL).
func CheckConfig(cfg Config) error {
	var errs []error
	if cfg.Slack.URL != "" {
		errs = append(errs, checkURL(keySlackURL, cfg.Slack.URL, cfg.AllowPrivate))
	}
	if cfg.Webhook.URL != "" {
		errs = append(errs, checkURL(keyWebhookURL, cfg.Webhook.URL, cfg.AllowPrivate))
	}
	return errors.Join(errs...)
}

func checkURL(key, raw string, allowPrivate bool) error {
	host, err := parseTarget(key, raw)
	if err != nil || allowPrivate {
		return err
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return checkAddr(key, host, ip)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return &URLError{Key: key, Host: host, Reason: fmt.Sprintf("host %s does not resolve (%v)", host, unwrapDNS(err)), Fix: "check the host name"}
	}
	for _, ip := range ips {
		if err := checkAddr(key, host, ip); err != nil {
			return err
		}
	}
	return nil
}

// parseTarget checks the scheme and returns the host (brackets stripped).
func parseTarget(key, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", &URLError{Key: key, Reason: "is not a valid URL", Fix: "set it to the full https://… address"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", &URLError{Key: key, Host: u.Hostname(), Reason: fmt.Sprintf("scheme %q is not http or https", u.Scheme), Fix: "set it to the full https://… address"}
	}
	if u.Hostname() == "" {
		return "", &URLError{Key: key, Reason: "has no host", Fix: "set it to the full https://… address"}
	}
	return u.Hostname(), nil
}

func checkAddr(key, host string, ip netip.Addr) error {
	if why := privateKind(ip); why != "" {
		r := fmt.Sprintf("host %s is a %s address (%s)", host, why, ip)
		if host == ip.String() {
			r = fmt.Sprintf("%s is a %s address", ip, why)
		}
		return &URLError{Key: key, Host: host, Reason: r, Fix: privateFix}
	}
	return nil
}

var sharedCGNAT = netip.MustParsePrefix("100.64.0.0/10")

// privateKind names the class of a non-public address, or "" for a public one.
func privateKind(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsPrivate():
		return "private"
	case ip.Is4() && sharedCGNAT.Contains(ip):
		return "shared (CGNAT)"
	case ip.IsMulticast():
		return "multicast"
	case ip.Is4() && ip.As4()[0] == 0:
		return "unspecified"
	case ownAddr(ip):
		// A public address of this machine reaches its own services, just
		// as loopback does.
		return "local (this machine's own)"
	}
	return ""
}

// ownAddr reports whether ip is an address of one of this machine's network
// interfaces. The list is read at each call: interfaces come and go.
func ownAddr(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if own, ok := netip.AddrFromSlice(n.IP); ok && own.Unmap() == ip {
				return true
			}
		}
	}
	return false
}

// errPrivateDial is returned by the guarded dialer.
var errPrivateDial = errors.New("refused to connect")

// guardedControl refuses connections to non-public addresses. It runs after
// DNS resolution, on the address actually dialled, so a host that resolved to
// a public address at check time and a private one now is still refused.
func guardedControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse address %s", errPrivateDial, address)
	}
	if why := privateKind(ap.Addr()); why != "" {
		return fmt.Errorf("%w: %s is a %s address; %s", errPrivateDial, ap.Addr(), why, privateFix)
	}
	return nil
}

// NewClient returns the HTTP client the Worker uses when none is given: a 10s
// timeout, no redirects followed (a 3xx is a failed delivery), no proxy from
// the environment, and, unless allowPrivate, a dialer that refuses
// non-public addresses.
func NewClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = guardedControl
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// unwrapDNS drops the resolver's wrapping down to its message.
func unwrapDNS(err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		return de.Err
	}
	return err.Error()
}
