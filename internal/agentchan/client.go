package agentchan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"github.com/drover-dev/drover/internal/agentcall"
	"github.com/drover-dev/drover/internal/board"
)

// Client is the agent's side of the channel: an agentcall.Caller that
// sends every call to the run's socket with its token.
type Client struct {
	socket, token, runID string
	http                 *http.Client
}

var _ agentcall.Caller = (*Client)(nil)

// FromEnv is the client for the capability in this process's environment,
// or nil when there is none (EnvSocket unset).
func FromEnv() *Client {
	sock := os.Getenv(EnvSocket)
	if sock == "" {
		return nil
	}
	return NewClient(sock, os.Getenv(EnvToken), os.Getenv("DROVER_RUN_ID"))
}

// NewClient is the client for socket with token; runID, when set, is the
// run the caller believes it is in (the channel refuses another).
func NewClient(socket, token, runID string) *Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}
	return &Client{socket: socket, token: token, runID: runID, http: &http.Client{Transport: tr}}
}

func (c *Client) call(ctx context.Context, op string, in request, out any) error {
	body, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://drover/v1/"+op, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	if c.runID != "" {
		req.Header.Set(headerRun, c.runID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: drover's agent channel %s does not answer (%v): the run has ended or drover serve stopped; nothing was changed",
			agentcall.ErrRefused, c.socket, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusOK {
		return json.Unmarshal(b, out)
	}
	var r reply
	if json.Unmarshal(b, &r) != nil || r.Error == "" {
		r.Error = fmt.Sprintf("drover's agent channel answered %s", resp.Status)
	}
	switch resp.StatusCode {
	case http.StatusBadRequest:
		return &agentcall.InputError{Field: r.Field, Msg: r.Error}
	case http.StatusConflict, http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%w: %s", agentcall.ErrRefused, r.Error)
	}
	return errors.New(r.Error)
}

// ReadCard is agentcall.Service.ReadCard over the channel.
func (c *Client) ReadCard(ctx context.Context) (agentcall.Card, error) {
	var out agentcall.Card
	return out, c.call(ctx, "card", request{}, &out)
}

// Block is agentcall.Service.Block over the channel.
func (c *Client) Block(ctx context.Context, what, where, how string) (board.AgentReport, error) {
	var out board.AgentReport
	return out, c.call(ctx, "block", request{What: what, Where: where, How: how}, &out)
}

// Ask is agentcall.Service.Ask over the channel.
func (c *Client) Ask(ctx context.Context, question string, options []string) (board.AgentReport, error) {
	var out board.AgentReport
	return out, c.call(ctx, "ask", request{Question: question, Options: options}, &out)
}

// Done is agentcall.Service.Done over the channel.
func (c *Client) Done(ctx context.Context, summary string) (board.AgentReport, error) {
	var out board.AgentReport
	return out, c.call(ctx, "done", request{Summary: summary}, &out)
}

// Comment is agentcall.Service.Comment over the channel.
func (c *Client) Comment(ctx context.Context, text string) (board.Comment, error) {
	var out board.Comment
	return out, c.call(ctx, "comment", request{Text: text}, &out)
}

// Progress is agentcall.Service.Progress over the channel.
func (c *Client) Progress(ctx context.Context, note string) (board.Event, error) {
	var out board.Event
	return out, c.call(ctx, "progress", request{Note: note}, &out)
}
