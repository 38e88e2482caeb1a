// fluxserve serves the Flux test bed's sources on loopback: Git repositories over smart HTTP
// (git's own git-http-backend through net/http/cgi) and a static Helm repository.
//
//	fluxserve -addr 127.0.0.1:PORT -git DIR -helm DIR
//	fluxserve -free-ports N   (prints N loopback ports free right now, one a line)
//
// /git/<repo>.git/... goes to git-http-backend with GIT_PROJECT_ROOT=DIR; /helm/... serves
// the files of the Helm repository directory (index.yaml and packaged charts).
// Test fixture code for tests/testbed/flux/flux-testbed, not product code.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/cgi"
	"os/exec"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	gitRoot := flag.String("git", "", "directory holding bare repositories <name>.git")
	helmRoot := flag.String("helm", "", "directory holding index.yaml and chart archives")
	backend := flag.String("git-http-backend", "", "path of git-http-backend (default: the one in git --exec-path)")
	freePorts := flag.Int("free-ports", 0, "print this many free loopback ports and exit")
	flag.Parse()
	if *freePorts > 0 {
		printFreePorts(*freePorts)
		return
	}
	if *gitRoot == "" || *helmRoot == "" {
		log.Fatal("fluxserve: -git and -helm are required")
	}
	if *backend == "" {
		out, err := exec.Command("git", "--exec-path").Output()
		if err != nil {
			log.Fatalf("fluxserve: git --exec-path: %v", err)
		}
		*backend = strings.TrimSpace(string(out)) + "/git-http-backend"
	}

	mux := http.NewServeMux()
	mux.Handle("/git/", &cgi.Handler{
		Path: *backend,
		Root: "/git",
		Env:  []string{"GIT_PROJECT_ROOT=" + *gitRoot, "GIT_HTTP_EXPORT_ALL=1"},
	})
	mux.Handle("/helm/", http.StripPrefix("/helm/", http.FileServer(http.Dir(*helmRoot))))
	log.Printf("fluxserve: listening on %s (git %s, helm %s)", *addr, *gitRoot, *helmRoot)
	log.Fatal(http.ListenAndServe(*addr, logRequests(mux)))
}

// logRequests keeps one line per request so a failing fetch can be traced in the server log.
func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s", r.Method, r.URL.RequestURI())
		next.ServeHTTP(w, r)
	})
}

// printFreePorts lets the kernel pick the ports: all listeners stay open until every port is
// known, so the N ports are distinct.
func printFreePorts(n int) {
	listeners := make([]net.Listener, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatalf("fluxserve: %v", err)
		}
		listeners = append(listeners, l)
	}
	for _, l := range listeners {
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
}
