// Command edge is Listgate's public gateway: it checks API keys, scopes, the
// key's site and the site's plan rate limit, serves cached listing reads and
// forwards writes and misses to the origin (DESIGN.md §2–§4).
//
// The gateway pipeline is not built yet; until it is, clients talk to the
// origin directly with the internal token, and this command says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "edge: the gateway is not built yet; run the origin (`go run ./origin serve`)")
	os.Exit(2)
}
