//go:build deps

// This file keeps the gateway's mandated libraries pinned in go.mod while
// the gateway pipeline is being built; it is never compiled (build tag
// "deps"). fasthttp stays at v1.74.0: newer releases need a module the
// module proxy here refuses.
package main

import (
	_ "github.com/dgraph-io/ristretto/v2"
	_ "github.com/fasthttp/router"
	_ "github.com/goccy/go-json"
	_ "github.com/valyala/fasthttp"
)
