package analyzer

import (
	"strings"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/arabic"
	"github.com/blevesearch/snowballstem/danish"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/finnish"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/hungarian"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/norwegian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/romanian"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
	"github.com/blevesearch/snowballstem/tamil"
	"github.com/blevesearch/snowballstem/turkish"

	"github.com/strata-db/strata/internal/errcode"
)

// snowball turns a Snowball stemmer into a function on words.
func snowball(stem func(*snowballstem.Env) bool) func(string) string {
	return func(w string) string {
		env := snowballstem.NewEnv(w)
		stem(env)
		return env.Current()
	}
}

// englishStem is the English (Porter2) stemmer of the english analyzer.
var englishStem = snowball(english.Stem)

// stemmers are the stemmer filter's languages (Milvus's names; "arabig"
// is Milvus's alias of arabic).
var stemmers = map[string]func(*snowballstem.Env) bool{
	"arabig":     arabic.Stem,
	"arabic":     arabic.Stem,
	"danish":     danish.Stem,
	"dutch":      dutch.Stem,
	"english":    english.Stem,
	"finnish":    finnish.Stem,
	"french":     french.Stem,
	"german":     german.Stem,
	"hungarian":  hungarian.Stem,
	"italian":    italian.Stem,
	"norwegian":  norwegian.Stem,
	"portuguese": portuguese.Stem,
	"romanian":   romanian.Stem,
	"russian":    russian.Stem,
	"spanish":    spanish.Stem,
	"swedish":    swedish.Stem,
	"tamil":      tamil.Stem,
	"turkish":    turkish.Stem,
}

// stemmerFor returns the stemmer of language (case-insensitive). Greek,
// which Milvus also has, has no Go Snowball stemmer and is refused.
func stemmerFor(language string) (func(string) string, error) {
	s, ok := stemmers[strings.ToLower(language)]
	if !ok {
		return nil, errcode.Invalid("create stemmer failed : unsupport language: %s", language)
	}
	return snowball(s), nil
}
