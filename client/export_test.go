package client

import (
	"context"
	"time"
)

// SetSleep replaces how the client waits between attempts, so a test can
// see the waits without taking them.
func SetSleep(c *Client, sleep func(ctx context.Context, d time.Duration) error) { c.sleep = sleep }
