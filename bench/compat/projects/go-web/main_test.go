package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCounter(t *testing.T) {
	srv := httptest.NewServer(&counter{})
	defer srv.Close()
	for i, want := range []string{"count 1", "count 2"} {
		res, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.HasPrefix(string(b), want) {
			t.Fatalf("request %d: got %q", i, b)
		}
	}
}
