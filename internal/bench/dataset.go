package bench

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FashionMNISTDir is where the Debian package dataset-fashion-mnist installs
// the data set.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// Dataset is a set of base vectors to index and query vectors to search
// for, all of dimension Dim and row-major.
type Dataset struct {
	// Name describes the data set in reports.
	Name string
	// Dim is the vector dimension.
	Dim int
	// Base holds the indexed vectors.
	Base []float32
	// Queries holds the query vectors.
	Queries []float32
}

// N returns the number of base vectors.
func (d *Dataset) N() int { return len(d.Base) / d.Dim }

// NQ returns the number of query vectors.
func (d *Dataset) NQ() int { return len(d.Queries) / d.Dim }

// Query returns query i.
func (d *Dataset) Query(i int) []float32 { return d.Queries[i*d.Dim : (i+1)*d.Dim] }

// LoadFashionMNIST reads Fashion-MNIST from dir: the 60,000 training images
// are the base vectors and the first maxQueries of the 10,000 test images
// (all when maxQueries <= 0) the queries, each 784 pixel values 0..255 as
// float32. It accepts the IDX files gzipped (train-images-idx3-ubyte.gz, as
// the Debian package ships them) or not.
func LoadFashionMNIST(dir string, maxQueries int) (*Dataset, error) {
	base, dim, err := readIDXImages(dir, "train-images-idx3-ubyte", 0)
	if err != nil {
		return nil, err
	}
	queries, qdim, err := readIDXImages(dir, "t10k-images-idx3-ubyte", maxQueries)
	if err != nil {
		return nil, err
	}
	if qdim != dim {
		return nil, fmt.Errorf("bench: fashion-mnist: train images have %d pixels, test images %d", dim, qdim)
	}
	return &Dataset{Name: "fashion-mnist", Dim: dim, Base: base, Queries: queries}, nil
}

// readIDXImages reads dir/name(.gz), an IDX file of unsigned bytes with
// three dimensions (images × rows × columns), keeping at most limit images
// when limit > 0.
func readIDXImages(dir, name string, limit int) ([]float32, int, error) {
	path := filepath.Join(dir, name+".gz")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		path = filepath.Join(dir, name)
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, 0, fmt.Errorf("bench: %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	return parseIDXImages(r, limit, path)
}

// parseIDXImages decodes an IDX3 unsigned-byte stream: the magic 0x00000803
// and three big-endian uint32 sizes, then the pixels.
func parseIDXImages(r io.Reader, limit int, name string) ([]float32, int, error) {
	var h [16]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, 0, fmt.Errorf("bench: %s: header: %w", name, err)
	}
	if m := binary.BigEndian.Uint32(h[:]); m != 0x803 {
		return nil, 0, fmt.Errorf("bench: %s: magic %#x, want 0x803 (unsigned byte, 3 dimensions)", name, m)
	}
	n := int(binary.BigEndian.Uint32(h[4:]))
	dim := int(binary.BigEndian.Uint32(h[8:])) * int(binary.BigEndian.Uint32(h[12:]))
	if dim == 0 || dim > 1<<20 || n > 1<<26 {
		return nil, 0, fmt.Errorf("bench: %s: implausible shape %d×%d", name, n, dim)
	}
	if limit > 0 {
		n = min(n, limit)
	}
	pix := make([]byte, n*dim)
	if _, err := io.ReadFull(r, pix); err != nil {
		return nil, 0, fmt.Errorf("bench: %s: pixels: %w", name, err)
	}
	out := make([]float32, len(pix))
	for i, p := range pix {
		out[i] = float32(p)
	}
	return out, dim, nil
}

// ParseSynthetic parses a synthetic data set spec "N,DIM".
func ParseSynthetic(spec string) (n, dim int, err error) {
	a, b, ok := strings.Cut(spec, ",")
	if ok {
		n, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			dim, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !ok || err != nil || n < 1 || dim < 1 {
		return 0, 0, fmt.Errorf("bench: synthetic spec %q should be N,DIM with positive integers", spec)
	}
	return n, dim, nil
}

// Synthetic returns n base and nq query vectors of dimension dim from the
// same distribution: a mixture of max(n/100, 1) clusters with N(0, I)
// centres, each point its centre plus 0.3*z*B with z ~ N(0, I_8) and B a
// random 8×dim basis shared by all clusters, plus 0.05*N(0, I) noise. Like
// real embeddings the data is clustered and has a low intrinsic dimension.
// The same seed gives the same data.
func Synthetic(n, dim, nq int, seed uint64) *Dataset {
	const latent = 8
	centers := max(n/100, 1)
	crng := rand.New(rand.NewPCG(seed, 0))
	cent := make([]float32, centers*dim)
	for i := range cent {
		cent[i] = float32(crng.NormFloat64())
	}
	basis := make([]float32, latent*dim)
	for i := range basis {
		basis[i] = 0.3 * float32(crng.NormFloat64())
	}
	gen := func(cnt int, salt uint64) []float32 {
		rng := rand.New(rand.NewPCG(seed, salt))
		v := make([]float32, cnt*dim)
		for i := range cnt {
			c := rng.IntN(centers)
			row := v[i*dim : (i+1)*dim]
			for j := range row {
				row[j] = cent[c*dim+j] + 0.05*float32(rng.NormFloat64())
			}
			for l := range latent {
				z := float32(rng.NormFloat64())
				for j, b := range basis[l*dim : (l+1)*dim] {
					row[j] += z * b
				}
			}
		}
		return v
	}
	return &Dataset{
		Name:    fmt.Sprintf("synthetic(seed %d)", seed),
		Dim:     dim,
		Base:    gen(n, 1),
		Queries: gen(nq, 2),
	}
}
