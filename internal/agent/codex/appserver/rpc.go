package appserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// MaxMessage bounds one message from the app-server, in bytes. proc hands
// drover a stdout line of at most 4 MiB (longer lines arrive cut); a line
// at the bound is taken as cut and reported, never decoded.
const MaxMessage = 4 << 20

// message is one JSON-RPC 2.0 message as the app-server writes it (it
// leaves out "jsonrpc" and accepts messages without it): a request (id and
// method), a notification (method, no id) or a response (id with result or
// error). A request id is a number or a string, kept raw to echo it back.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// JSON-RPC error codes drover sends.
const (
	codeMethodNotFound = -32601
)

// isRequest, isNotification and isResponse tell the three shapes apart.
func (m *message) isRequest() bool      { return len(m.ID) > 0 && m.Method != "" }
func (m *message) isNotification() bool { return len(m.ID) == 0 && m.Method != "" }
func (m *message) isResponse() bool     { return len(m.ID) > 0 && m.Method == "" }

// decode reads one stdout line. ok is false for a blank line (why "") and
// for a line that is not a message (why says what is wrong with it).
func decode(line []byte) (m message, ok bool, why string) {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		return m, false, ""
	case len(line) >= MaxMessage:
		return m, false, fmt.Sprintf("a message of %d bytes or more (cut at the line bound)", MaxMessage)
	case line[0] != '{':
		return m, false, "not a JSON-RPC message"
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return m, false, err.Error()
	}
	if m.Method == "" && len(m.ID) == 0 {
		return m, false, "a JSON object with neither id nor method"
	}
	return m, true, ""
}

// errNoConn is a write on a conn without a writer (LogParser's replay).
var errNoConn = errors.New("no connection to the app-server")

// conn writes messages to the app-server's stdin, one JSON object a line.
// Safe for concurrent use.
type conn struct {
	mu   sync.Mutex
	w    io.Writer
	next int64
	err  error // the first write error; later writes are not tried
}

func (c *conn) write(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		return errNoConn
	}
	if c.err != nil {
		return c.err
	}
	_, c.err = c.w.Write(append(b, '\n'))
	return c.err
}

func raw(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}

// request sends a request and returns its id.
func (c *conn) request(method string, params any) (string, error) {
	c.mu.Lock()
	c.next++
	id := strconv.FormatInt(c.next, 10)
	c.mu.Unlock()
	return id, c.write(message{ID: json.RawMessage(id), Method: method, Params: raw(params)})
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	return c.write(message{Method: method, Params: raw(params)})
}

// respond answers the server's request id with result.
func (c *conn) respond(id json.RawMessage, result any) error {
	r := raw(result)
	if r == nil {
		r = json.RawMessage("{}")
	}
	return c.write(message{ID: id, Result: r})
}

// fail answers the server's request id with an error.
func (c *conn) fail(id json.RawMessage, code int, msg string) error {
	return c.write(message{ID: id, Error: &rpcError{Code: code, Message: msg}})
}
