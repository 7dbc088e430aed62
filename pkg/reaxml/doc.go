// Package reaxml reads REAXML, the XML listing format of realestate.com.au,
// as agencies push it to Listgate.
//
// A [Decoder] streams a feed: it reads one listing element at a time from an
// encoding/xml token stream and hands back a [Listing], so memory stays flat
// however long the feed is. A listing that cannot be read is reported as a
// [*ListingError] with its line and ids, and decoding goes on with the next
// listing; only XML that is broken beyond recovery stops the feed.
//
// # Ingest semantics
//
// REAXML is an update format: a record that omits an element leaves that
// field unchanged in the database, and status stubs (withdrawn, offmarket,
// deleted, …) carry little more than their ids. The [Listing] model keeps that
// information:
//
//   - a nil pointer or a nil slice means the element was absent (leave the
//     stored value alone);
//   - a non-nil pointer to "" or a non-nil empty slice means the element was
//     present but empty (clear the stored value);
//   - a group (price, rent, address, features, …) is a pointer to a struct;
//     inside it every field follows the same rule, so an ingest applies the
//     non-nil fields one by one.
//
// Numbers and yes/no flags cannot be "present but empty"; an empty numeric or
// flag element reads as absent. Money-like elements are structs ([Price],
// [Charge], …) whose nil Value inside a non-nil struct means "present, no
// amount".
//
// # Tolerance
//
// Real feeds are messy. The decoder accepts a UTF-8 byte-order mark, a missing
// XML declaration, ISO-8859-1 / windows-1252 feeds, stray bytes that are not
// UTF-8 in a UTF-8 feed (read as windows-1252), control characters that XML
// forbids (dropped), HTML entities such as &nbsp; and bare ampersands (the
// tokenizer runs in non-strict mode), CDATA sections and padded text (trimmed),
// every date layout real feeds use (see [ParseDate]), and booleans written as
// yes/no/true/false/1/0 in any case.
//
// # Privacy
//
// The propertyList username and password attributes are never read into any
// value the package returns; [RedactCredentials] removes them from a copy of
// the feed before it is persisted. vendorDetails (the seller's private name
// and phone numbers) is recognised and deliberately not kept.
//
// Unknown elements are not dropped: they are collected in [Listing.Extra].
package reaxml
