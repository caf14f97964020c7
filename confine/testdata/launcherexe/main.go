// Command launcherexe is TestLauncherExe's workforce: built once with
// version control information and copied, as itself and as
// workforce-launcher beside it, so that both are of the same build. As
// the launcher it appends its executable's name to "launched" beside it,
// then is the launcher; otherwise it runs its arguments confined to the
// directory named by the first (in namespaces when the second is "ns"),
// prints confine.Launcher's answer and exits with the command's status.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/confine"
)

func main() {
	if confine.IsLauncher(os.Args) {
		if exe, err := os.Executable(); err == nil {
			if f, err := os.OpenFile(filepath.Join(filepath.Dir(exe), "launched"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
				fmt.Fprintln(f, filepath.Base(exe))
				f.Close()
			}
		}
		os.Exit(confine.Main(os.Args[2:]))
	}
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: launcherexe DIR ns|plain COMMAND [ARG...]")
		os.Exit(2)
	}
	p := confine.Policy{Dirs: []string{os.Args[1]}, Devices: confine.TerminalDevices}
	if os.Args[2] == "ns" {
		p.Net = &confine.Namespaces{Tmp: os.Args[1]}
	}
	cmd := exec.Command(os.Args[3], os.Args[4:]...)
	cmd.Dir = os.Args[1]
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	l, err := confine.Start(cmd, p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "launcherexe:", err)
		os.Exit(1)
	}
	err = cmd.Wait()
	l.Close()
	path, own := confine.Launcher()
	fmt.Printf("launcher: %s %v\n", filepath.Base(path), own)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "launcherexe:", err)
		os.Exit(1)
	}
}
