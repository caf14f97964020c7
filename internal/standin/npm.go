package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// As npm and npx (linked under those names), the stand-in serves packages
// and skills from the directory $STANDIN_REGISTRY, offline, and appends
// each call ("npm pack SPEC", "npx skills add URL --skill NAME") to
// $STANDIN_REGISTRY/calls. With $STANDIN_NPM_FAIL set, every call fails
// as npm does without a network; $STANDIN_NPM_DELAY seconds are slept
// before each call is served (to make concurrent runs meet).
//
//	npm pack SPEC --json --ignore-scripts --pack-destination DIR
//	    packs $STANDIN_REGISTRY/npm/NAME (NAME: the spec's package name
//	    without scope and version) as npm does, under package/, and prints
//	    npm's JSON
//	npx -y skills add URL --skill NAME -y
//	    copies $STANDIN_REGISTRY/skills.sh/NAME to .agents/skills/NAME and
//	    links .claude/skills/NAME to it, as the skills.sh installer does
//	npx -y prpm install SCOPE/NAME --as HARNESS
//	    copies $STANDIN_REGISTRY/prpm/NAME to .claude/skills/NAME
func packageManager(name string, args []string) int {
	reg := os.Getenv("STANDIN_REGISTRY")
	f, err := os.OpenFile(filepath.Join(reg, "calls"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err == nil {
		fmt.Fprintln(f, name, strings.Join(args, " "))
		f.Close()
	}
	if d, err := strconv.ParseFloat(os.Getenv("STANDIN_NPM_DELAY"), 64); err == nil {
		time.Sleep(time.Duration(d * float64(time.Second)))
	}
	if os.Getenv("STANDIN_NPM_FAIL") != "" {
		fmt.Fprintln(os.Stderr, "npm error code EAI_AGAIN\nnpm error network request failed: the network is unavailable")
		return 1
	}
	if err := serve(reg, name, args); err != nil {
		fmt.Fprintf(os.Stderr, "npm error %v\n", err)
		return 1
	}
	return 0
}

func serve(reg, name string, args []string) error {
	flag := func(f string) string {
		for i, a := range args {
			if a == f && i+1 < len(args) {
				return args[i+1]
			}
		}
		return ""
	}
	switch {
	case name == "npm" && len(args) > 1 && args[0] == "pack":
		spec := args[1]
		pkg := spec
		if strings.HasPrefix(pkg, "@") {
			_, pkg, _ = strings.Cut(pkg, "/")
		}
		pkg, _, _ = strings.Cut(pkg, "@")
		return npmPack(filepath.Join(reg, "npm", pkg), flag("--pack-destination"))
	case name == "npx" && len(args) > 3 && args[1] == "skills" && args[2] == "add":
		skill := flag("--skill")
		if err := copyDir(filepath.Join(reg, "skills.sh", skill), filepath.Join(".agents/skills", skill)); err != nil {
			return err
		}
		if err := os.MkdirAll(".claude/skills", 0o755); err != nil {
			return err
		}
		if err := os.Symlink(filepath.Join("../../.agents/skills", skill), filepath.Join(".claude/skills", skill)); err != nil {
			return err
		}
		return os.WriteFile("skills-lock.json", []byte(`{"skills": {}}`+"\n"), 0o644)
	case name == "npx" && len(args) > 3 && args[1] == "prpm" && args[2] == "install":
		ref := args[3]
		pkg := ref[strings.LastIndexByte(ref, '/')+1:]
		return copyDir(filepath.Join(reg, "prpm", pkg), filepath.Join(".claude/skills", pkg))
	}
	return fmt.Errorf("the stand-in %s does not do %q", name, strings.Join(args, " "))
}

// npmPack packs the directory src into dest as npm pack does.
func npmPack(src, dest string) error {
	var pj struct{ Name, Version string }
	data, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		return fmt.Errorf("code E404: 404 Not Found - %s", filepath.Base(src))
	}
	if err := json.Unmarshal(data, &pj); err != nil {
		return err
	}
	file := strings.ReplaceAll(strings.TrimPrefix(pj.Name, "@"), "/", "-") + "-" + pj.Version + ".tgz"
	out, err := os.Create(filepath.Join(dest, file))
	if err != nil {
		return err
	}
	defer out.Close()
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + filepath.ToSlash(rel), Mode: int64(fi.Mode().Perm()), Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(body)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	b, _ := json.Marshal([]map[string]string{{"name": pj.Name, "version": pj.Version, "filename": file}})
	fmt.Println(string(b))
	return nil
}

// copyDir copies the tree src to dst.
func copyDir(src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("code E404: no such skill %s", filepath.Base(src))
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		return os.WriteFile(to, data, fi.Mode().Perm())
	})
}
