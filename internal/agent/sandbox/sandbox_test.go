package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// pairs are the (option, path) pairs of a bwrap argument list, in order,
// up to "--"; single options stand alone.
func pairs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return out
		}
		switch a {
		case "--ro-bind", "--ro-bind-try", "--bind", "--bind-try":
			out = append(out, a+" "+args[i+1]+" "+args[i+2])
			i += 2
		case "--tmpfs", "--dev", "--proc", "--chdir", "--remount-ro":
			out = append(out, a+" "+args[i+1])
			i++
		default:
			out = append(out, a)
		}
	}
	return out
}

func TestArgs(t *testing.T) {
	ws, home := "/srv/proj/.drover/workspaces/DRV-1", "/root"
	run := Run{Workspace: ws, Home: home, Program: "/usr/bin/env"}
	for _, tc := range []struct {
		name    string
		c       Config
		r       Run
		want    []string // pairs present
		notWant []string // pairs absent
		order   [][2]string
	}{
		{name: "network on by default", c: Config{Kind: KindBwrap}, r: run,
			want: []string{"--unshare-all", "--share-net", "--die-with-parent", "--new-session", "--proc /proc", "--dev /dev",
				"--ro-bind-try /usr /usr", "--ro-bind-try /etc /etc", "--tmpfs /tmp", "--tmpfs " + home,
				"--bind " + ws + " " + ws, "--chdir " + ws, "--remount-ro /"},
			notWant: []string{"--ro-bind-try / /", "--bind / /", "--ro-bind /usr/bin/env /usr/bin/env"},
			// /tmp's and the home's tmpfs come before the workspace's bind,
			// which may lie under either.
			order: [][2]string{{"--tmpfs /tmp", "--bind " + ws + " " + ws}, {"--tmpfs " + home, "--bind " + ws + " " + ws}}},
		{name: "network on", c: Config{Kind: KindBwrap, Network: NetworkOn}, r: run, want: []string{"--share-net"}},
		{name: "network off", c: Config{Kind: KindBwrap, Network: NetworkOff}, r: run, want: []string{"--unshare-all"}, notWant: []string{"--share-net"}},
		{name: "network loopback", c: Config{Kind: KindBwrap, Network: NetworkLoopback}, r: run, want: []string{"--unshare-all"}, notWant: []string{"--share-net"}},
		{name: "read and write entries after the home", c: Config{Kind: KindBwrap, Read: []string{home + "/.claude.json"}, Write: []string{"/srv/cache"}}, r: run,
			want:  []string{"--ro-bind-try " + home + "/.claude.json " + home + "/.claude.json", "--bind-try /srv/cache /srv/cache"},
			order: [][2]string{{"--tmpfs " + home, "--ro-bind-try " + home + "/.claude.json " + home + "/.claude.json"}}},
		{name: "a program outside the visible dirs is bound alone", c: Config{Kind: KindBwrap},
			r:       Run{Workspace: ws, Home: home, Program: "/srv/proj/agent.sh"},
			want:    []string{"--ro-bind /srv/proj/agent.sh /srv/proj/agent.sh"},
			notWant: []string{"--ro-bind /srv/proj /srv/proj"}},
		{name: "a program in the workspace is not bound again", c: Config{Kind: KindBwrap},
			r: Run{Workspace: ws, Program: ws + "/run.sh"}, notWant: []string{"--ro-bind " + ws + "/run.sh " + ws + "/run.sh"}},
		{name: "the launcher's binds", c: Config{Kind: KindBwrap},
			r:    Run{Workspace: ws, Binds: []Bind{{Path: "/run/drover/cap.sock", RW: true}, {Path: "/var/log/x.prompt.md"}, {Path: "/srv/mcp", Try: true}}},
			want: []string{"--bind /run/drover/cap.sock /run/drover/cap.sock", "--ro-bind /var/log/x.prompt.md /var/log/x.prompt.md", "--ro-bind-try /srv/mcp /srv/mcp"}},
		{name: "the card's home is bound at HOME, before the read entries", c: Config{Kind: KindBwrap, Read: []string{home + "/.claude.json"}},
			r:       Run{Workspace: ws, Home: home, HomeDir: "/srv/proj/.drover/homes/DRV-1"},
			want:    []string{"--bind /srv/proj/.drover/homes/DRV-1 " + home},
			notWant: []string{"--tmpfs " + home},
			order:   [][2]string{{"--bind /srv/proj/.drover/homes/DRV-1 " + home, "--ro-bind-try " + home + "/.claude.json " + home + "/.claude.json"}}},
		{name: "no home without HOME", c: Config{Kind: KindBwrap}, r: Run{Workspace: ws}, notWant: []string{"--tmpfs " + home}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.c.Args(tc.r, []string{"/bin/sh", "-c", "x"})
			if i := slices.Index(args, "--"); i < 0 || !slices.Equal(args[i+1:], []string{"/bin/sh", "-c", "x"}) {
				t.Fatalf("the program's argv must follow --: %q", args)
			}
			got := pairs(args)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("missing %q in %q", w, got)
				}
			}
			for _, nw := range tc.notWant {
				for _, g := range got {
					if g == nw || (strings.HasSuffix(nw, " ") && strings.HasPrefix(g, nw)) {
						t.Errorf("unexpected %q in %q", g, got)
					}
				}
			}
			for _, o := range tc.order {
				if a, b := slices.Index(got, o[0]), slices.Index(got, o[1]); a < 0 || b < 0 || a > b {
					t.Errorf("%q must come before %q: %q", o[0], o[1], got)
				}
			}
		})
	}
}

func TestCheckPath(t *testing.T) {
	home, hidden := "/home/op", []string{"/srv/proj/.drover", "/srv/proj/.drover/workspaces"}
	for _, tc := range []struct {
		path, why string // why: a word of the refusal, "" = accepted
	}{
		{"/home/op/.claude.json", ""},
		{"/srv/cache", ""},
		{"/srv/proj/src", ""},
		{"relative/path", "not absolute"},
		{"/srv/../etc", ".."},
		{"/", "whole file system"},
		{"/home/op", "operator's whole home"},
		{"/home/op/", "operator's whole home"},
		{"/srv/proj", "/srv/proj/.drover"},
		{"/srv/proj/.drover", "/srv/proj/.drover"},
		{"/srv/proj/.drover/workspaces", "workspaces"},
		{"/srv", "/srv/proj/.drover"},
		{"/proc/1/environ", "/proc"},
		{"/sys", "/sys"},
		{"/dev/sda", "/dev"},
		{"/a\nb", "newline"},
		{"", "empty"},
	} {
		why := CheckPath(tc.path, home, hidden)
		if (tc.why == "") != (why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("CheckPath(%q) = %q, want one saying %q", tc.path, why, tc.why)
		}
	}
}

func TestExpand(t *testing.T) {
	for in, want := range map[string]string{"~": "/home/op", "~/.ssh/x": "/home/op/.ssh/x", "/abs": "/abs", "~other/x": "~other/x"} {
		if got := Expand(in, "/home/op"); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}
