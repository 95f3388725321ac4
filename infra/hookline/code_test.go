package hookline

import (
	"debug/elf"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBuildFromSource: the default code is a static linux binary of the
// function's package for the asked architecture, built in the module the
// app runs in (here, this repository's).
func TestBuildFromSource(t *testing.T) {
	for arch, machine := range map[string]elf.Machine{"arm64": elf.EM_AARCH64, "x86_64": elf.EM_X86_64} {
		dir, err := goBuild(".", "enqueue", map[string]string{"arm64": "arm64", "x86_64": "amd64"}[arch])
		require.NoError(t, err)
		f, err := elf.Open(filepath.Join(dir, "bootstrap"))
		require.NoError(t, err, arch)
		require.Equal(t, machine, f.Machine, arch)
		require.Equal(t, elf.ELFOSABI_NONE, f.OSABI, arch)
		require.Nil(t, f.Section(".interp"), "%s: static (CGO off), no dynamic loader", arch)
		require.NoError(t, f.Close())
	}
}
