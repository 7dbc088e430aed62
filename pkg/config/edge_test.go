package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestEdgeYAMLIsTheDefaults(t *testing.T) {
	got, err := LoadEdge("../../configs/edge.yaml", env(map[string]string{"LISTGATE_INTERNAL_TOKEN": token}))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultEdge()
	want.InternalToken = token
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configs/edge.yaml gives\n%+v\nwant the defaults\n%+v", got, want)
	}
}

func TestEdgeEnvironmentAndValidation(t *testing.T) {
	got, err := LoadEdge("", env(map[string]string{"LISTGATE_INTERNAL_TOKEN": token,
		"LISTGATE_REDIS_URL": "redis://127.0.0.1:6379/0", "LISTGATE_EXPECTED_EDGES": "3", "LISTGATE_EDGE_ADDR": "127.0.0.1:0",
		"LISTGATE_EDGE_WRITE_BUFFER_BYTES": "65536", "LISTGATE_EDGE_MAX_CONNECTIONS": "50000",
		"LISTGATE_EDGE_MAX_CONNECTIONS_PER_IP": "0"}))
	if err != nil || got.RedisURL != "redis://127.0.0.1:6379/0" || got.ExpectedEdges != 3 || got.Addr != "127.0.0.1:0" ||
		got.WriteBufferBytes != 65536 || got.MaxConnections != 50000 || got.MaxConnectionsPerIP != 0 {
		t.Fatalf("%+v %v", got, err)
	}
	for name, e := range map[string]map[string]string{
		"no token":   {},
		"bad redis":  {"LISTGATE_INTERNAL_TOKEN": token, "LISTGATE_REDIS_URL": "http://x"},
		"bad origin": {"LISTGATE_INTERNAL_TOKEN": token, "LISTGATE_ORIGIN_URL": "origin"},
		"edges":      {"LISTGATE_INTERNAL_TOKEN": token, "LISTGATE_EXPECTED_EDGES": "0"},
		"bad level":  {"LISTGATE_INTERNAL_TOKEN": token, "LISTGATE_LOG_LEVEL": "chatty"},
	} {
		if _, err := LoadEdge("", env(e)); err == nil || strings.Contains(err.Error(), token) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	c := DefaultEdge()
	c.InternalToken = token
	c.TrustedProxies = []string{"10.0.0.0/8", "not-a-prefix"}
	if err := c.Validate(); err == nil {
		t.Error("bad trusted proxy accepted")
	}
	c.TrustedProxies = nil
	for _, n := range []int{0, 4<<10 - 1, 1<<20 + 1} {
		c.WriteBufferBytes = n
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "write_buffer_bytes") {
			t.Errorf("write_buffer_bytes %d: err = %v", n, err)
		}
	}
	c.WriteBufferBytes = DefaultEdge().WriteBufferBytes
	for _, n := range []int{0, -1, 1_000_001} {
		c.MaxConnections = n
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "max_connections") {
			t.Errorf("max_connections %d: err = %v", n, err)
		}
	}
	c.MaxConnections = DefaultEdge().MaxConnections
	for _, n := range []int{-1, 1_000_001} {
		c.MaxConnectionsPerIP = n
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "max_connections_per_ip") {
			t.Errorf("max_connections_per_ip %d: err = %v", n, err)
		}
	}
}
