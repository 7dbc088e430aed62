package store

import "github.com/listgate/listgate/pkg/apierror"

// notFound is the error for a missing row a client named.
func notFound(what string) error { return apierror.NotFound(what + " not found") }

// invalid is the error for a bad input field.
func invalid(field, msg string) error { return apierror.InvalidField(field, msg) }
