package policy

// errnoRows find an errno: by its name (Node, libuv, Go's syscall names),
// or in the C library's words for it (strerror), which every runtime
// prints the same way, in the shapes Python ("[Errno 111] Connection
// refused"), Rust ("Connection refused (os error 111)", io::ErrorKind's
// "kind: ConnectionRefused") and Windows (WSAECONNREFUSED, "No connection
// could be made because the target machine actively refused it") add.
//
// A transport errno means the request never got an answer from a server:
// the operator's network (proxy, DNS, firewall), not the provider. A file
// system errno is a denial inside the agent (a read-only sandbox), or the
// machine's disk.
var errnoRows = []tokenRow{
	words(`ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|EAI_NONAME|EHOSTUNREACH|ENETUNREACH|ENETDOWN|ECONNABORTED|EPIPE|UND_ERR_CONNECT_TIMEOUT|UND_ERR_SOCKET|UND_ERR_CLOSED|UND_ERR_DESTROYED|ConnectionRefused|ConnectionReset|FailedToOpenSocket|WSAECONNREFUSED|WSAECONNRESET|WSAETIMEDOUT|WSAHOST_NOT_FOUND|WSAENETUNREACH`, famNetwork),
	shaped(`(?i)\b(connection refused|connection reset by peer|no route to host|network is unreachable|host is unreachable|actively refused it|forcibly closed by the remote host|no such host is known|getaddrinfo (?:ENOTFOUND|EAI_AGAIN|failed))\b`, famNetwork),
	shaped(`\bkind: (ConnectionRefused|ConnectionReset|ConnectionAborted|HostUnreachable|NetworkUnreachable|NotConnected|TimedOut|AddrNotAvailable)\b`, famNetwork),
	shaped(`\b(i/o timeout|TLS handshake timeout)\b`, famNetwork),
	words(`EROFS|EACCES|EPERM`, famSandbox),
	shaped(`(?i)\b(read-only file system)\b|\b(permission denied) \(os error 13\)|\[Errno 13\] (Permission denied)\b|\[Errno 1\] (Operation not permitted)\b|\bkind: (PermissionDenied|ReadOnlyFilesystem)\b`, famSandbox),
	shaped(`\b(ENOSPC)\b|(?i)\b(no space left on device)\b`, famDisk),
	// A certificate the client would not trust (a proxy that re-signs
	// TLS, a missing CA bundle): every card of the profile fails alike
	// until an operator fixes the setup.
	shaped(`\b(SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_GET_ISSUER_CERT_LOCALLY|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERT_HAS_EXPIRED|CERTIFICATE_VERIFY_FAILED)\b|\b(x509: certificate)\b|(?i)\b(self[- ]signed certificate|unable to get local issuer certificate|unable to verify the first certificate|certificate verify failed|certificate has expired|SSL certificate problem)\b`, famConfig),
	// OpenSSL's reason codes as Python prints them ("[SSL:
	// WRONG_VERSION_NUMBER] wrong version number"): a TLS client speaking to
	// a plain-HTTP port or proxy, a protocol the server will not speak, is
	// the setup; a peer that hung up mid-record is the network.
	shaped(`\[SSL: (WRONG_VERSION_NUMBER|UNSUPPORTED_PROTOCOL|HTTP_REQUEST|TLSV1_ALERT_\w+|SSLV3_ALERT_\w+|TLSV1_UNRECOGNIZED_NAME)\]|\b(ERR_SSL_WRONG_VERSION_NUMBER)\b|(?i)\b(wrong version number)\b`, famConfig),
	shaped(`\[SSL: (UNEXPECTED_EOF_WHILE_READING|DECRYPTION_FAILED_OR_BAD_RECORD_MAC|BAD_RECORD_MAC)\]`, famNetwork),
}
