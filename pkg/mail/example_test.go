package mail_test

import (
	"fmt"

	"github.com/listgate/listgate/pkg/mail"
)

func ExampleRedacted() {
	fmt.Println(mail.Redacted("smtp://apikey:s3cret@smtp.example.com:587?from=leads%40example.com"))
	// A password with an unescaped "/" makes the URL invalid: everything up
	// to the last "@" goes.
	fmt.Println(mail.Redacted("smtp://apikey:s3/cret@smtp.example.com:587"))
	// Output:
	// smtp://apikey:xxxxx@smtp.example.com:587?from=leads%40example.com
	// smtp://xxxxx@smtp.example.com:587
}

func ExampleNewSender() {
	s, err := mail.NewSender("smtps://apikey:s3cret@smtp.example.com?from=Listgate%20Leads%20%3Cleads%40example.com%3E")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s)
	fmt.Println(s.From())

	_, err = mail.NewSender("smtp://smtp.example.com:587")
	fmt.Println(err)
	// Output:
	// smtps://apikey:xxxxx@smtp.example.com?from=Listgate%20Leads%20%3Cleads%40example.com%3E
	// "Listgate Leads" <leads@example.com>
	// mail URL: from= is required
}
