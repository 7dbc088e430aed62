package apikey_test

import (
	"fmt"

	"github.com/listgate/listgate/pkg/apikey"
)

func ExampleGenerate() {
	key, err := apikey.Generate()
	if err != nil {
		panic(err)
	}
	hash := apikey.Hash(key) // store this; show key to the user once
	fmt.Println(len(key), key[:4], apikey.Check(key), len(hash))
	// Output: 40 lgk_ <nil> 32
}

func ExampleCheck() {
	fmt.Println(apikey.Check("lgk_Q7hN2xLk9pWv4RtY8mZc1bFs6GdJ3e2b8vYR"))
	fmt.Println(apikey.Check("lgk_Q7hN2xLk9pWv4RtY8mZc1bFs6GdJ3e2b8vYr"))
	fmt.Println(apikey.Check("lgk_not-a-key"))
	// Output:
	// <nil>
	// apikey: key checksum mismatch
	// apikey: malformed key
}

func ExampleParseScopes() {
	s, err := apikey.ParseScopes("leads:write, listings:read")
	fmt.Println(s, err, s.Has(apikey.ListingsRead), s.Has(apikey.StatsRead))
	_, err = apikey.ParseScopes("listings:read,admin")
	fmt.Println(err)
	// Output:
	// listings:read,leads:write <nil> true false
	// apikey: unknown scope "admin"
}
