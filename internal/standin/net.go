package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The network actions, for the tests of a confined run's network (what
// its namespaces and workforce's proxy let through). Each records one
// line a try in a file of $LOG, never fails the stand-in:
//
//	tryconnect ADDR...     connect over TCP to each HOST:PORT, directly,
//	                       and record in $LOG/connects "ADDR: ok" or the
//	                       error's errno name ("ADDR: ENETUNREACH")
//	tryfetch [POST] URL [NAME=VALUE]...
//	                       GET URL (or POST "{}") through the proxy
//	                       $HTTP_PROXY names (when set: loopback URLs
//	                       too), with the headers given as NAME=VALUE
//	                       words, and record
//	                       in $LOG/fetches "URL: STATUS FIRST-LINE-OF-BODY"
//	                       or "URL: error ..."
//	tryunix PATH...        connect to each Unix socket PATH and record in
//	                       $LOG/unix "PATH: ok" or the errno name
//	scanenv VALUE          look for VALUE in this process's environment
//	                       and in every /proc/PID/environ it can read, and
//	                       record in $LOG/environ "VALUE: found in PID" for
//	                       each, then "VALUE: N processes read"

// errText is err as the network actions record it: its errno's name
// when it has one.
func errText(err error) string {
	if err == nil {
		return "ok"
	}
	if errno := syscall.Errno(0); errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return "error " + err.Error()
}

// netAct carries out a network action; ok false when verb is none.
func netAct(verb, rest string) (bool, error) {
	log := func(name, line string) error { return appendLine(filepath.Join(os.Getenv("LOG"), name), line) }
	switch verb {
	case "tryconnect":
		for _, addr := range strings.Fields(rest) {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err == nil {
				c.Close()
			}
			if err := log("connects", addr+": "+errText(err)); err != nil {
				return true, err
			}
		}
	case "tryunix":
		for _, p := range strings.Fields(rest) {
			c, err := net.DialTimeout("unix", p, 5*time.Second)
			if err == nil {
				c.Close()
			}
			if err := log("unix", p+": "+errText(err)); err != nil {
				return true, err
			}
		}
	case "tryfetch":
		words := strings.Fields(rest)
		method := http.MethodGet
		if len(words) > 0 && words[0] == http.MethodPost {
			method, words = http.MethodPost, words[1:]
		}
		if len(words) == 0 {
			return true, errors.New("tryfetch: no URL")
		}
		return true, log("fetches", words[0]+": "+fetch(method, words[0], words[1:]))
	case "scanenv":
		value := strings.TrimSpace(rest)
		if value == "" {
			return true, errors.New("scanenv: no value")
		}
		if strings.Contains(strings.Join(os.Environ(), "\x00"), value) {
			if err := log("environ", value+": found in self"); err != nil {
				return true, err
			}
		}
		ents, _ := os.ReadDir("/proc")
		read := 0
		for _, e := range ents {
			if e.Name()[0] < '0' || e.Name()[0] > '9' {
				continue
			}
			data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil {
				continue
			}
			read++
			if strings.Contains(string(data), value) {
				if err := log("environ", value+": found in "+e.Name()); err != nil {
					return true, err
				}
			}
		}
		return true, log("environ", fmt.Sprintf("%s: %d processes read", value, read))
	default:
		return false, nil
	}
	return true, nil
}

// fetch sends a GET (or a POST of "{}") to url through the proxy
// $HTTP_PROXY names, loopback destinations included (where most clients
// go direct), with the headers (NAME=VALUE), and says how it went.
func fetch(method, url string, headers []string) string {
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return errText(err)
	}
	for _, h := range headers {
		if k, v, ok := strings.Cut(h, "="); ok {
			if k == "bearer" {
				k, v = "Authorization", "Bearer "+v
			}
			req.Header.Set(k, v)
		}
	}
	proxy := http.ProxyFromEnvironment
	if p := os.Getenv("HTTP_PROXY"); p != "" {
		if u, err := neturl.Parse(p); err == nil {
			proxy = http.ProxyURL(u)
		}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: proxy}}
	resp, err := client.Do(req)
	if err != nil {
		return errText(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	first, _, _ := strings.Cut(strings.TrimSpace(string(got)), "\n")
	return fmt.Sprintf("%d %s", resp.StatusCode, first)
}
