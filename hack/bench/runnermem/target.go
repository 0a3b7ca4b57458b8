//go:build ignore

// A loopback TLS target for hack/bench/runnermem/run.sh: accepts /api/push, answers 202.
// go run hack/bench/runnermem/target.go PORT
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net/http"
	"os"
	"time"
)

func main() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		log.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	http.HandleFunc("/api/push", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	srv := &http.Server{Addr: "127.0.0.1:" + os.Args[1], TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	// Bounded: the server ends by itself after 40 minutes.
	go func() { time.Sleep(40 * time.Minute); os.Exit(0) }()
	log.Fatal(srv.ListenAndServeTLS("", ""))
}
