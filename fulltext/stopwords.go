// The switch below is written from the list in fulltext.go; keep the two
// in step (TestStopwordSwitch checks).

package fulltext

// isStopword is Stopword as a switch: Go compiles it to a search on length
// and bytes that is faster than a map lookup, and the catalog's index asks
// it for every word of every plot at startup.
func isStopword(w string) bool {
	switch w {
	case "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
		"anything", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "below", "between",
		"both", "but", "by", "can", "can't", "cannot", "could", "couldn't", "d", "did", "didn't", "do", "does",
		"doesn't", "doing", "don't", "down", "during", "each", "few", "for", "from", "further", "get", "go",
		"going", "gone", "got", "had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "he'd",
		"he'll", "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how", "how's", "i",
		"i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "just",
		"let's", "like", "ll", "m", "many", "may", "me", "might", "more", "most", "much", "mustn't", "my",
		"myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours",
		"ourselves", "out", "over", "own", "re", "really", "s", "same", "shall", "shan't", "she", "she'd",
		"she'll", "she's", "should", "shouldn't", "so", "some", "something", "such", "t", "than", "that", "that's",
		"the", "their", "theirs", "them", "themselves", "then", "there", "there's", "these", "they", "they'd",
		"they'll", "they're", "they've", "thing", "things", "this", "those", "through", "to", "too", "under",
		"until", "up", "upon", "ve", "very", "was", "wasn't", "we", "we'd", "we'll", "we're", "we've", "were",
		"weren't", "what", "what's", "when", "when's", "where", "where's", "which", "while", "who", "who's",
		"whom", "why", "why's", "will", "with", "won't", "would", "wouldn't", "you", "you'd", "you'll", "you're",
		"you've", "your", "yours", "yourself", "yourselves":
		return true
	}
	return false
}
