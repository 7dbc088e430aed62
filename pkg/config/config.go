// Package config loads the configuration of the origin and the edge: the
// defaults written in the structs, then an optional YAML file (configs/*.yaml
// are annotated copies of the defaults), then LISTGATE_* environment
// variables, then Validate.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// Getenv looks up an environment variable; os.LookupEnv in production, a map
// in tests.
type Getenv func(name string) (string, bool)

// loadFile decodes the YAML file at path into dst, rejecting unknown keys.
// An empty path leaves dst as it is.
func loadFile(path string, dst any) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(dst); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config: %s: %w", path, err)
	}
	return nil
}

func envString(get Getenv, name string, dst *string) {
	if v, ok := get(name); ok && v != "" {
		*dst = v
	}
}

func envDuration(get Getenv, name string, dst *time.Duration) error {
	if v, ok := get(name); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("config: %s: %w", name, err)
		}
		*dst = d
	}
	return nil
}

func envInt(get Getenv, name string, dst *int) error {
	if v, ok := get(name); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("config: %s: %w", name, err)
		}
		*dst = n
	}
	return nil
}
