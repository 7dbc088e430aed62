package logctx

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestHandlerAddsContextFields(t *testing.T) {
	tests := []struct {
		name string
		log  func(l *slog.Logger, ctx context.Context)
		want map[string]any
	}{
		{"context fields", func(l *slog.Logger, ctx context.Context) { l.InfoContext(ctx, "m", "x", 1) },
			map[string]any{"request_id": "r1", "trace_id": "t1", "x": float64(1)}},
		{"record wins", func(l *slog.Logger, ctx context.Context) { l.InfoContext(ctx, "m", "request_id", "mine") },
			map[string]any{"request_id": "mine", "trace_id": "t1"}},
		{"no context", func(l *slog.Logger, _ context.Context) { l.Info("m") }, map[string]any{}},
		{"with", func(l *slog.Logger, ctx context.Context) { l.With("service", "s").InfoContext(ctx, "m") },
			map[string]any{"request_id": "r1", "trace_id": "t1", "service": "s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil)))
			ctx := With(context.Background(), slog.String(KeyRequestID, "r0"), slog.String(KeyTraceID, "t1"))
			ctx = With(ctx, slog.String(KeyRequestID, "r1"))
			tt.log(l, ctx)
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"time", "level", "msg"} {
				delete(got, k)
			}
			if len(got) != len(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (line %s)", k, got[k], v, buf.String())
				}
			}
			if strings.Count(buf.String(), `"request_id"`) > 1 {
				t.Errorf("request_id twice: %s", buf.String())
			}
		})
	}
}

func TestTextHandler(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(NewHandler(slog.NewTextHandler(&buf, nil)))
	l.InfoContext(With(context.Background(), slog.String(KeyTraceID, "abc")), "m")
	if !strings.Contains(buf.String(), "trace_id=abc") {
		t.Errorf("text line without the trace id: %s", buf.String())
	}
}
