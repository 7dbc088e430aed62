package apierror_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/listgate/listgate/pkg/apierror"
)

func ExampleWriteHTTP() {
	rec := httptest.NewRecorder()
	err := fmt.Errorf("get listing 7: %w", apierror.NotFound("listing not found"))
	apierror.WriteHTTP(rec, "01J9ZQ", err)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println(rec.Body.String())
	// Output:
	// 404 application/json; charset=utf-8
	// {"error":{"code":"NOT_FOUND","message":"listing not found","request_id":"01J9ZQ"}}
}

func ExampleAppendJSON() {
	e := apierror.Validation(map[string]string{
		"email":   "not an e-mail address",
		"contact": "give an email, phone or mobile",
	})
	fmt.Println(string(apierror.AppendJSON(nil, e, "")))
	// Output:
	// {"error":{"code":"VALIDATION_ERROR","message":"invalid request","details":{"contact":"give an email, phone or mobile","email":"not an e-mail address"}}}
}

func ExampleFrom() {
	e := apierror.From(fmt.Errorf("query listings: %w", fmt.Errorf("dial tcp: connection refused")))
	fmt.Println(e.Code, e.Code.Status(), e.Message)
	fmt.Println(e.Err) // for the log only
	// Output:
	// INTERNAL_ERROR 500 internal error
	// query listings: dial tcp: connection refused
}
