package offline

// The cue lexicons of request understanding: what makes a turn a rejection,
// a follow-up, a request, small talk or a question. They are data; the
// rules that read them are in understand.go.

// rejectPhrases turn down the titles just shown or say they were seen.
// A phrase preceded by "haven't", "never" or "not" does not count ("I
// haven't seen it" accepts).
var rejectPhrases = []string{
	"not those", "not these", "not them", "not that one", "not this one", "not the ones",
	"not what i", "not interested",
	"no thanks", "no thank you", "nope", "nah",
	"different ones", "different one", "different movies", "different films", "different titles",
	"different options", "different suggestions", "different shows", "something different",
	"anything different", "different", "something else", "anything else", "someone else",
	"new ones", "other ones", "others", "other options", "other suggestions", "other movies",
	"other films", "other titles", "other shows", "other recommendations", "any other", "another one",
	"another", "more options", "more suggestions", "more recommendations", "show me more",
	"give me more", "some more", "any more", "next ones", "next page", "try again",
	"none of these", "none of those", "none of them", "none of that", "neither", "none",
	"seen it", "seen that", "seen them", "seen those", "seen these", "seen this", "seen all",
	"seen both", "seen every", "seen em", "seen most", "seen one", "seen that one", "seen this one",
	"already seen", "already watched", "already saw", "watched it", "watched that", "watched them",
	"watched those", "watched these", "watched all", "watched both", "saw it", "saw that",
	"saw them", "saw those", "saw these", "saw all", "saw both",
	"not for me", "not my thing", "not my cup of tea", "not my taste", "not my style",
	"look boring", "looks boring", "seem boring", "sound boring", "sounds boring", "all boring",
	"skip those", "skip these", "pass", "seen the first", "seen the second", "seen the third",
	"seen the last", "seen the top", "seen the fourth", "seen the fifth", "seen both",
}

// rejectVerbs followed by a pointer to the titles shown ("didn't like them")
// reject them.
var rejectVerbs = []string{
	"didn't like", "did not like", "don't like", "do not like", "didn't enjoy", "don't want",
	"do not want", "didn't love", "hated", "hate", "dislike", "disliked", "not a fan of",
	"not into", "not feeling", "don't care for", "didn't care for", "not keen on", "no to",
}

// shownPointers point at the titles just shown.
var shownPointers = []string{
	"them", "those", "these", "it", "that", "this", "that one", "this one", "any of them",
	"any of those", "any of these", "either", "both", "all of them", "those ones", "these ones",
	"the ones", "your suggestions", "your picks", "the suggestions", "the recommendations",
	"those movies", "these movies", "those films", "these films", "those shows", "these shows",
	"em", "the last one", "the first one", "the second one", "the third one", "the last two",
	"the first two", "the last", "the first", "the other one", "the others",
}

// unseenMarkers before a "seen" phrase make it the opposite: not seen yet.
var unseenMarkers = set("haven't", "havent", "not", "never", "hasn't", "didn't", "didnt", "haven’t")

// followUpStarts at the start of a turn make it a follow-up of the last one.
var followUpStarts = []string{
	"and", "but", "now", "what about", "how about", "with", "without", "only", "just", "also",
	"plus", "same", "then", "in", "from", "make it", "more", "less", "except", "except for",
	"ok and", "okay and", "ok now", "okay now", "ok but", "okay but", "oh and", "actually",
	"narrow", "filter", "limit", "keep", "still", "also with", "what if",
}

// followUpAnywhere anywhere in a turn make it a follow-up.
var followUpAnywhere = []string{
	"also", "only", "instead", "make it", "make them", "make that", "as well", "rather", "same",
	"this time", "but", "what about", "how about", "switch to", "change it", "change to",
	"narrow it", "narrow down", "filter", "keep the", "keep it", "still", "of those",
	"of these", "among them", "among those", "from those", "from these", "just",
}

// additiveCues add the new genres or people to those in force instead of
// replacing them.
var additiveCues = []string{"also", "as well", "plus", "add", "include", "including", "and also"}

// requestPhrases ask for titles without naming what kind.
var requestPhrases = []string{
	"recommend", "recommendation", "recommendations", "suggest", "suggestion", "suggestions",
	"find", "show me", "show us", "give me", "looking for", "look for", "search", "discover",
	"to watch", "should i watch", "should we watch", "in the mood", "got any", "have any",
	"any good", "pick", "list", "surprise me", "ideas", "what should", "what to watch",
	"i want", "i'd like", "i would like", "i need", "we want", "can i get", "let me see",
	"let's watch", "open to", "what's good", "whats good", "something to see", "movie night",
	"help me choose", "help me decide", "something good", "anything good",
}

// helpQuestions ask about the agent itself.
var helpQuestions = []string{
	"how does this work", "how does it work", "how do you work", "how does memento work",
	"how does the memory work", "how does your memory work", "how do you remember",
	"what can you do", "what do you do", "what are you", "who are you", "what is this",
	"what's this", "how can you help", "how do i use", "how to use", "how should i use",
	"what can i ask", "what can i say", "what do you remember", "what do you know about me",
	"what have you remembered", "what do you know", "do you remember", "what is memento",
	"commands", "what are your features", "how do follow ups work", "instructions",
	"what should i say", "how do i start",
}

// smallTalkWords may make up a whole turn that needs no search ("thanks",
// "ok, sounds good"); signalWords are those that mark it as small talk.
var (
	smallTalkWords = set(
		"i", "i'm", "im", "i'll", "ill", "i've", "i'd", "will", "would", "think", "so", "very",
		"much", "you", "your", "you're", "for", "the", "a", "it", "that", "this", "one", "all",
		"oh", "well", "again", "too", "and", "really", "just", "guess", "definitely", "be",
		"to", "me", "my", "we", "us", "help", "them", "those", "these", "both", "out", "have",
		"had", "day", "night", "evening", "morning", "afternoon", "of", "is", "was", "lot",
		"now", "then", "man", "friend", "buddy", "there", "it's", "that's", "do", "check", "try",
		"watch", "see", "give", "shot", "go", "later", "soon", "tonight", "today", "weekend",
		"please", "either", "though", "maybe", "probably", "interesting", "noted", "understood",
		"glad", "happy", "am", "are", "doing", "how", "what", "up", "sup", "good", "great", "nice",
		"okay", "ok", "k", "kk", "cool", "awesome", "perfect", "fantastic", "amazing", "excellent",
		"wonderful", "super", "alright", "fine", "thank", "thanks", "thx", "ty", "cheers",
		"appreciate", "appreciated", "got", "hi", "hello", "hey", "hiya", "howdy", "yo", "bye",
		"goodbye", "see", "ya", "yes", "yeah", "yep", "yup", "sure", "lol", "haha", "hahaha",
		"wow", "ah", "hmm", "sounds", "looks", "seems", "like", "love", "it", "on", "list",
		"add", "haven't", "havent", "never", "seen", "yet", "heard", "heard of", "not", "bad",
		"merry", "christmas", "happy", "holidays", "god", "bless", "take", "care", "soon",
		"welcome", "no", "problem", "worries", "worry", "thought", "so", "true", "right", "exactly",
		"indeed", "fun", "enjoy", "enjoyed", "did", "liked", "loved", "watched", "sorry",
		"bad", "mine", "get", "gotcha", "agreed", "agree", "makes", "sense", "neat", "sweet",
	)
	signalWords = set(
		"hi", "hello", "hey", "hiya", "howdy", "yo", "sup", "thanks", "thank", "thx", "ty",
		"cheers", "appreciate", "ok", "okay", "k", "kk", "cool", "great", "nice", "awesome",
		"perfect", "fantastic", "amazing", "excellent", "wonderful", "sounds", "bye", "goodbye",
		"yes", "yeah", "yep", "yup", "sure", "alright", "fine", "good", "check", "try", "lol",
		"haha", "wow", "love", "like", "noted", "understood", "gotcha", "agreed", "agree",
		"welcome", "morning", "evening", "merry", "seen", "heard", "enjoy", "enjoyed", "liked",
		"loved", "watched", "neat", "sweet", "sorry", "interesting", "hmm",
	)
)

// titleQuestionStarts open a question about a title just shown, which needs
// no search ("Is it a comedy?", "Who is in it?").
var titleQuestionStarts = []string{
	"is it", "is that", "is this", "was it", "was that", "was this", "are they", "are those",
	"are these", "were they", "does it", "does that", "does this", "did it", "did that",
	"has it", "is that one", "is this one", "who is in", "who's in", "whos in", "who stars in",
	"who starred in", "who directed", "who made", "what is it about", "what's it about",
	"whats it about", "what is that about", "what's that about", "what is that one about",
	"what's that one about", "what's the plot", "what is the plot", "how long is it",
	"how long is that", "when did it come out", "when was it made", "what year was",
	"where can i watch it", "where can i watch that", "which one is", "which is",
	"that's the one", "thats the one", "that is the one", "is that the one", "isn't that the one",
	"is it the one",
}

// adultWords ask for adult titles.
var adultWords = []string{"nsfw", "x rated", "porn", "porno", "pornographic", "adult movies", "adult films", "adult content", "adult titles", "adult only", "adults only", "18+"}

// freeTextStops end a topic after "about".
var freeTextStops = set(
	"from", "since", "before", "after", "between", "starring", "featuring", "with", "please",
	"that", "which", "who", "where", "in", "made", "released", "set", "but", "and", "or",
	"only", "instead", "either", "like", "for", "movies", "films", "shows", "movie", "film",
	"show", "series", "to", "on", "by",
)

// topicWords are subjects people ask for that no genre covers; they become
// the free-text topic.
var topicWords = []string{
	"christmas", "halloween", "thanksgiving", "easter", "vampire", "vampires", "werewolf",
	"werewolves", "dinosaur", "dinosaurs", "aliens", "alien invasion", "robots", "robot",
	"time travel", "space travel", "outer space", "space", "dragons", "pirates", "pirate",
	"ninjas", "witches", "sharks", "shark", "dogs", "dog", "cats", "horses", "boxing",
	"football", "baseball", "basketball", "soccer", "hockey", "wrestling", "surfing", "racing",
	"cars", "music", "rock and roll", "hip hop", "jazz", "cooking", "food", "chess", "true story",
	"true stories", "road trip", "world war ii", "world war 2", "ww2", "wwii", "vietnam",
	"cold war", "civil war", "heroine", "female lead", "strong female lead", "serial killer",
	"serial killers", "artificial intelligence", "ai", "post apocalyptic", "apocalypse",
	"submarine", "prison", "high seas", "treasure", "magic", "wizards", "monsters", "monster",
	"princess", "princesses", "cowgirl", "samurai", "gladiators", "knights", "mermaids",
	"superpowers", "hackers", "hacking", "lawyers", "doctors", "hospital", "journalism",
	"elections", "mountains", "ocean", "jungle", "desert", "snow",
}
