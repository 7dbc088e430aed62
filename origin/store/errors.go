package store

import (
	"errors"

	"github.com/listgate/listgate/pkg/apierror"
)

// notFound is the error for a missing row a client named.
func notFound(what string) error { return apierror.NotFound(what + " not found") }

// IsNotFound reports whether err is the store's NOT_FOUND for a missing row.
func IsNotFound(err error) bool {
	e, ok := errors.AsType[*apierror.Error](err)
	return ok && e != nil && e.Code == apierror.CodeNotFound
}

// invalid is the error for a bad input field.
func invalid(field, msg string) error { return apierror.InvalidField(field, msg) }
