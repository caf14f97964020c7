package confine_test

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/seed-3bc194a6/workforce/confine"
)

// A harness started confined to its tree and the session's tmp: main
// must call confine.Main first when confine.IsLauncher(os.Args).
func ExampleStart() {
	d, err := confine.Decide(confine.On)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	cmd := exec.Command("/usr/bin/env", "sh", "-c", "echo confined > out.txt")
	cmd.Dir = "/home/user/.workforce/sessions/s1/tree"
	if !d.Confine {
		fmt.Fprintln(os.Stderr, "warning:", d.Warning)
		_ = cmd.Run()
		return
	}
	p := confine.Policy{
		Dirs:    []string{cmd.Dir, "/home/user/.workforce/sessions/s1/tmp"},
		Devices: confine.TerminalDevices,
	}
	launched, err := confine.Start(cmd, p)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer launched.Close()
	_ = cmd.Wait()
}
