package policy

import "testing"

// TestFingerprintFoldsWhatDiffersBetweenOccurrences: one fault seen on
// different cards, at different times, with different ids, gets one
// fingerprint; different faults get different ones.
func TestFingerprintFoldsWhatDiffersBetweenOccurrences(t *testing.T) {
	same := [][2]string{
		{`error: account acct_8f2k1Lx9Qz7 is suspended (request req_01HZX3Y4K5M6N7P8Q9R0S1T2U3)`,
			`error: account acct_Zq81mKx02Lp is suspended (request req_01HZX9Y4K5M6N7P8Q9R0S1T2AB)`},
		{`2026-12-01T10:00:01Z fatal: cannot open /srv/work/DRV-12/go.mod: permission denied`,
			`2026-12-01T11:42:19.5Z fatal: cannot open /srv/work/DRV-7/go.mod: permission denied`},
		{`upstream said "key sk-live-abc123 revoked" after 1532 ms`, `upstream said "key sk-live-zzz999 revoked" after 20 ms`},
		{"\x1b[31mError:\x1b[0m  connect   failed at 10:01:02\n", "Error: connect failed at 23:59:59"},
		{`run 01m8sxp6btps8sb01tea8snqtf failed with 0x7f3a`, `run 01m8sxp6qrn7cvv0j3xy8e2z40 failed with 0x1b2c`},
		{`see https://status.example.com/incidents/4411?x=1`, `see https://status.example.com/incidents/9?x=2`},
	}
	for _, p := range same {
		a, b := Fingerprint(KindUnknown, p[0], 1), Fingerprint(KindUnknown, p[1], 1)
		if a != b {
			t.Errorf("one fault, two fingerprints:\n %q → %q (%s)\n %q → %q (%s)", p[0], NormalizeError(p[0]), a, p[1], NormalizeError(p[1]), b)
		}
	}
	differ := [][2]string{
		{`error: account is suspended`, `error: key is revoked`},
		{`cannot find module "alpha"`, `panic: runtime error: index out of range`},
		{`FAIL TestParse`, `ok all tests passed but lint failed`},
	}
	for _, p := range differ {
		if Fingerprint(KindUnknown, p[0], 1) == Fingerprint(KindUnknown, p[1], 1) {
			t.Errorf("two faults, one fingerprint: %q and %q (both %q / %q)", p[0], p[1], NormalizeError(p[0]), NormalizeError(p[1]))
		}
	}
	if Fingerprint(KindUnknown, "x", 1) == Fingerprint(KindAgentFailed, "x", 1) {
		t.Error("the kind must be part of the fingerprint")
	}
	if Fingerprint(KindAgentFailed, "", 1) == Fingerprint(KindAgentFailed, "", 2) {
		t.Error("with no text, the exit code tells failures apart")
	}
	if Informative(Fingerprint(KindAgentFailed, "", 1)) || Informative(Fingerprint(KindAgentFailed, " \n ", -1)) || !Informative(Fingerprint(KindAgentFailed, "x", 1)) || Informative("") {
		t.Error("only a fingerprint made of text is informative")
	}
	noText := Classify(Signals{AgentKind: "command", ExitCode: 1}, nil)
	if fp := FingerprintOf(noText, 1); Informative(fp) {
		t.Errorf("a failure with no error text (%+v) got an informative fingerprint %s", noText, fp)
	}
	withText := Classify(Signals{AgentKind: "command", ExitCode: 1, Stderr: "frobnicator quorum lost"}, nil)
	if fp := FingerprintOf(withText, 1); !Informative(fp) {
		t.Errorf("a failure with error text (%+v) got %s", withText, fp)
	}
	if Fingerprint(KindSucceeded, "fine", 0) != "" {
		t.Error("success has no fingerprint")
	}
	if k := FingerprintKind(Fingerprint(KindTimeout, "slow", -1)); k != KindTimeout {
		t.Errorf("FingerprintKind = %q", k)
	}
	if n := NormalizeError(string(make([]byte, 100000))); len(n) > fingerprintText {
		t.Errorf("normalised text of %d bytes, want at most %d", len(n), fingerprintText)
	}
	if n := NormalizeError("bad \xff\xfe utf8"); n != "bad utf#" {
		t.Errorf("invalid UTF-8 kept: %q", n)
	}
}
