package catalog

// genreAliases maps the genre names of other sources (IMDb, MovieLens) and
// common spellings to the catalog's vocabulary, which is the one of the
// Wikipedia film lists. Keys are in normKey form.
var genreAliases = map[string]string{
	"sci fi":          "Science Fiction",
	"scifi":           "Science Fiction",
	"science fiction": "Science Fiction",
	"animation":       "Animated",
	"animated":        "Animated",
	"cartoon":         "Animated",
	"film noir":       "Noir",
	"noir":            "Noir",
	"children":        "Family",
	"childrens":       "Family",
	"kids":            "Family",
	"family":          "Family",
	"history":         "Historical",
	"historical":      "Historical",
	"sport":           "Sports",
	"sports":          "Sports",
	"biography":       "Biography",
	"biographical":    "Biography",
	"biopic":          "Biography",
	"reality tv":      "Reality-TV",
	"talk show":       "Talk-Show",
	"game show":       "Game-Show",
	"martial arts":    "Martial Arts",
	"found footage":   "Found Footage",
	"live action":     "Live Action",
}

// canonicalGenres holds the names CanonicalGenre returns unchanged: the
// Wikipedia vocabulary and the targets of genreAliases.
var canonicalGenres = func() map[string]bool {
	m := map[string]bool{}
	for _, g := range []string{"Action", "Adventure", "Animated", "Biography", "Comedy", "Crime",
		"Dance", "Disaster", "Documentary", "Drama", "Erotic", "Family", "Fantasy", "Found Footage",
		"Historical", "Horror", "Independent", "Legal", "Live Action", "Martial Arts", "Musical",
		"Mystery", "Noir", "Performance", "Political", "Romance", "Satire", "Science Fiction", "Short",
		"Silent", "Slasher", "Sports", "Spy", "Superhero", "Supernatural", "Suspense", "Teen",
		"Thriller", "War", "Western"} {
		m[g] = true
	}
	for _, g := range genreAliases {
		m[g] = true
	}
	return m
}()

// CanonicalGenre returns the catalog's spelling of a genre name: source
// names that differ from the catalog vocabulary are mapped ("Sci-Fi" and
// "sci fi" become "Science Fiction", "Animation" becomes "Animated",
// "Film-Noir" becomes "Noir", "Children" becomes "Family", "Sport" becomes
// "Sports"), and any other name is returned trimmed, with its first letter
// upper-cased, so "comedy" and "Comedy" are one genre. It returns "" for a
// blank name.
func CanonicalGenre(name string) string {
	name = collapseSpace(name)
	if name == "" || canonicalGenres[name] {
		return name
	}
	if c, ok := genreAliases[normKey(name)]; ok {
		return c
	}
	if c := name[0]; 'a' <= c && c <= 'z' {
		name = string(c-('a'-'A')) + name[1:]
	}
	return name
}
