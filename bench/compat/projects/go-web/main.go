// Command compatweb serves a counter over HTTP.
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"sync/atomic"
)

type counter struct{ n atomic.Int64 }

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "count %d\n", c.n.Add(1))
}

func main() {
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:8087"
	}
	log.Printf("listening on %s", addr)
	log.Fatal(http.ListenAndServe(addr, &counter{}))
}
