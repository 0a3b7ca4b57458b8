// fbget is a tiny static HTTP client for cluster smoke tests (the images here have no curl):
// it GETs a URL, retrying until the response is 2xx (and contains -expect, if given), prints
// the status and body, and exits 0; it exits 1 when the attempts run out.
//
//	fbget -url http://nginx.default.svc.cluster.local/ -attempts 30 -expect ok
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	url := flag.String("url", "", "URL to fetch (required)")
	attempts := flag.Int("attempts", 30, "attempts before giving up")
	interval := flag.Duration("interval", time.Second, "pause between attempts")
	expect := flag.String("expect", "", "substring the body must contain")
	flag.Parse()
	if *url == "" {
		flag.Usage()
		os.Exit(2)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for i := 1; i <= *attempts; i++ {
		body, status, err := get(client, *url)
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "attempt %d: %v\n", i, err)
		case status/100 != 2:
			fmt.Fprintf(os.Stderr, "attempt %d: HTTP %d\n", i, status)
		case !strings.Contains(body, *expect):
			fmt.Fprintf(os.Stderr, "attempt %d: body lacks %q\n", i, *expect)
		default:
			fmt.Printf("GET %s: HTTP %d after %d attempt(s)\n%s", *url, status, i, body)
			return
		}
		time.Sleep(*interval)
	}
	os.Exit(1)
}

func get(c *http.Client, url string) (string, int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return string(b), resp.StatusCode, err
}
