package netspec

// Presets are named allow lists a spec's "presets" adds. "dev", the
// default, holds the package registries and git forges a coding agent
// needs, on port 443 only (their content hosts included, since a
// download is often redirected there):
//
//   - npm: registry.npmjs.org, and registry.yarnpkg.com (yarn's name for
//     the same registry);
//   - PyPI: pypi.org and files.pythonhosted.org (where the files are);
//   - Go: proxy.golang.org (the module proxy) and sum.golang.org (the
//     checksum database);
//   - crates.io: crates.io, static.crates.io (crate files) and
//     index.crates.io (the sparse index);
//   - RubyGems: rubygems.org and index.rubygems.org;
//   - Maven Central: repo.maven.apache.org and repo1.maven.org;
//   - GitHub: github.com (git over https), api.github.com,
//     codeload.github.com (archives), objects.githubusercontent.com,
//     release-assets.githubusercontent.com (release files) and
//     raw.githubusercontent.com;
//   - GitLab: gitlab.com (git over https, the API, archives).
//
// A forge is also a way out for data (an agent holding a token can push
// or open an issue): the run's read denial keeps the user's tokens from
// it, and `"presets": []` in config.json drops the preset.
var Presets = map[string][]string{
	"dev": {
		"registry.npmjs.org:443",
		"registry.yarnpkg.com:443",
		"pypi.org:443",
		"files.pythonhosted.org:443",
		"proxy.golang.org:443",
		"sum.golang.org:443",
		"crates.io:443",
		"static.crates.io:443",
		"index.crates.io:443",
		"rubygems.org:443",
		"index.rubygems.org:443",
		"repo.maven.apache.org:443",
		"repo1.maven.org:443",
		"github.com:443",
		"api.github.com:443",
		"codeload.github.com:443",
		"objects.githubusercontent.com:443",
		"release-assets.githubusercontent.com:443",
		"raw.githubusercontent.com:443",
		"gitlab.com:443",
	},
}
