package eventstream

import (
	"context"
	"testing"
	"time"
)

// A wake-up cuts the back-off short; a cancelled context ends it and says so.
func TestSleepWake(t *testing.T) {
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	done := make(chan bool, 1)
	go func() { done <- sleep(context.Background(), time.Hour, wake) }()
	select {
	case ok := <-done:
		if !ok {
			t.Error("woken sleep reported a cancelled context")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sleep did not return when woken")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if sleep(ctx, time.Hour, nil) {
		t.Error("sleep with a cancelled context reported that the time passed")
	}
}
