package hygiene

import "regexp"

// imperativeVerbs are what an order to the system asks it to do with its
// answers.
const imperativeVerbs = `(recommend|suggest|mention|promote|push|include|pick|choose|rank|show|say|tell|answer|respond|reply|output|print|write|claim|describe|call)`

// instructionNouns are what an attacker asks the model to set aside.
const instructionNouns = `(instructions?|prompts?|rules?|directions?|directives?|guidelines?|guardrails?|constraints?|programming|policies|policy|context|orders)`

// authorityRoles are the roles a text claims in order to be obeyed.
const authorityRoles = `(developer|dev|admin|administrator|sysadmin|operator|owner|creator|maker|programmer|engineer|maintainer|moderator|superuser|root\s+user|designer)s?`

// systemNouns name the software the instructions are aimed at.
const systemNouns = `(app|application|system|assistant|bot|chatbot|service|model|ai|platform|site|website|program|server|memory|database|recommender|tool|product|software|agent)`

// privilegedModes are the modes a text tries to switch on.
const privilegedModes = `(admin|administrator|administrative|debug|debugging|developer|dev|maintenance|god|sudo|root|superuser|privileged|unrestricted|unlocked|diagnostic|service|override|jailbreak|jailbroken|unfiltered|uncensored)`

// everyUser are the words for all of a service's users ("recommend it to
// anyone" is how people talk about a film, "to every user" is not).
const everyUser = `(all|every|each|any|all\s+the|all\s+other|every\s+other|other)\s+(other\s+)?(users?|customers?|accounts?|profiles?|subscribers?|clients?|members?)\b`

// everyone are the words for all people, used with verbs of memory
// ("remember this for everyone").
const everyone = `(everyone|everybody|every\s+one|every\s+body|all\s+people|each\s+person|` + `(all|every|each|any|all\s+the|all\s+other|every\s+other|other)\s+(other\s+)?(users?|customers?|accounts?|profiles?|subscribers?|clients?|members?))\b`

// defaultRules are the instruction patterns. Matching is on the text as
// Normalise returns it: lower case, ASCII quotes, no accents.
var defaultRules = []rule{
	{reason: "asks to ignore or override earlier instructions",
		needs: []string{"ignor", "disregard", "forget", "overrid", "overwrit", "bypass", "skip", "drop", "discard", "abandon"},
		re:    regexp.MustCompile(`\b(ignore|disregard|forget|override|overwrite|bypass|skip|drop|discard|abandon)\b[^.!?]{0,40}\b(previous|prior|above|earlier|preceding|your|these|those|system|original|initial|existing)\b[^.!?]{0,30}\b` + instructionNouns + `\b`)},
	// "The rules" and "all rules" are an order only when ignoring them is
	// what the clause asks ("hackers who ignore the rules" is a plot).
	{reason: "asks to ignore or override earlier instructions",
		needs:  []string{"ignor", "disregard", "forget", "overrid", "overwrit", "bypass", "discard", "abandon"},
		clause: true,
		re:     regexp.MustCompile(`^(please\s+|now\s+|and\s+|so\s+|just\s+|kindly\s+|then\s+)?(you\s+(should|must|can|may|need\s+to|have\s+to|are\s+to)\s+)?(ignore|disregard|forget|override|overwrite|bypass|discard|abandon)\s+(all|any|the|my|every)\b[^.!?]{0,30}\b` + instructionNouns + `\b`)},
	{reason: "asks to ignore or override earlier instructions",
		needs: []string{"ignor", "disregard", "forget", "overrid", "bypass", "discard", "abandon"},
		re: regexp.MustCompile(`\b(ignore|disregard|forget|override|bypass|discard|abandon)\s+(all\s+|everything\s+|anything\s+|whatever\s+)?(of\s+)?(the\s+|that\s+|this\s+|what\s+(was|is|came|you\s+(read|saw|were\s+told))\s+)?(above|afore(mentioned|said)?)\b` +
			`|\b(ignore|disregard|forget)\s+(everything|all|anything|whatever)\s+(you\s+(were|have\s+been|'ve\s+been)\s+(told|taught|given)|(i|we|they|anyone)\s+(said|wrote|told\s+you)\s+(before|earlier|previously)|(before|prior\s+to)\s+this|(said|written|stated)\s+(before|earlier|previously|so\s+far))` +
			`|\bdisregard\s+(all|any|every|each)\b`)},
	{reason: "declares new instructions for the system",
		needs: []string{"instruction", "directive", "rules", "orders", "prompt", "task", "role", "persona", "purpose", "objective"},
		re: regexp.MustCompile(`\b(new|updated|real|true|actual|hidden|secret|additional|following|revised|override)\s+(system\s+)?(instructions?|directives?|rules|orders|prompt)\s*(:|are|is|follow)` +
			`|\byour\s+(new|real|true|actual|only)\s+(task|role|job|purpose|objective|goal|persona|mission|instructions?|directive)\b` +
			`|\byour\s+(role|persona|purpose|objective|directive)\s+(is|will\s+be)\s+now\b`)},
	{reason: "reassigns the assistant's identity or role",
		needs: []string{"you", "henceforth"},
		re:    regexp.MustCompile(`\byou\s+(are|'re|will\s+be|shall\s+be)\s+(now|no\s+longer|from\s+now\s+on)\b|\bfrom\s+now\s+on,?\s+you\b|\byou\s+(must|will|shall|should)\s+now\b|\bhenceforth,?\s+you\b`)},
	{reason: "asks the assistant to role-play another system",
		needs: []string{"act", "behav", "respond", "function", "operat", "pretend", "role", "imperson"},
		re:    regexp.MustCompile(`(^|[.!?;:,]\s*|\b(please|now|you|and)\s+)(act|behave|respond|function|operate)\s+as\s+(if\s+you|an?\s+|my\s+|the\s+|though)|\bpretend\s+(to\s+be|you\s+are|you're|that\s+you)\b|\brole-?play\s+as\b|\bimpersonate\s+(an?|the)\s+(system|assistant|admin|developer|ai)\b`)},
	{reason: "imitates a system, developer or assistant message",
		needs: []string{"sys", "developer", "assistant", "admin", "root", "operator", "im_", "endoftext", "inst", "###", "begin"},
		re:    regexp.MustCompile(`(^|\n|[.!?]\s+|["'\[(<{]\s*)(system|developer|assistant|admin|administrator|root|sys|operator)\s*(prompt|message|note|override|instruction|notice|update)?\s*[:>\]]|<\|?(im_start|im_end|system|endoftext)\|?>|\[/?(inst|system|sys)\]|<</?sys>>|###\s*(instruction|system|response)|\bbegin\s+(system|admin)\s+(prompt|message|mode)\b`)},
	{reason: "orders what the assistant must always or never do",
		needs:  []string{"always", "only", "never", "exclusively", "from now on"},
		clause: true,
		re:     regexp.MustCompile(`^(please\s+|and\s+|also\s+|so\s+|now\s+|then\s+)?(you\s+)?(must\s+|should\s+|need\s+to\s+|have\s+to\s+|will\s+)?(always|only|never|exclusively|from\s+now\s+on)\s+(ever\s+)?` + imperativeVerbs + `\b`)},
	{reason: "orders what the assistant must always or never do",
		needs: []string{"always", "only", "never", "exclusively", "every", "all"},
		re:    regexp.MustCompile(`\byou\s+(must|should|need\s+to|have\s+to|will|are\s+to|are\s+required\s+to)\s+(always|only|never|exclusively)\s+` + imperativeVerbs + `\b|\b(always|only|never)\s+` + imperativeVerbs + `\s+[^.!?]{0,40}\b(to|for)\s+(every|all|any)\s*(one|body|user|users|people)\b|\b` + imperativeVerbs + `\s+[^.!?]{0,60}\bto\s+(every|all)\s*(one|body|users?)\b`)},
	{reason: "orders the assistant directly",
		needs: []string{"command", "order", "instruct", "direct", "authori", "sudo", "require"},
		re:    regexp.MustCompile(`\b(i|we)\s+(hereby\s+)?(command|order|instruct|direct|authori[sz]e|require)\s+you\s+to\b|(^|[.!?\n]\s*)sudo\s+\w`)},
	{reason: "asks to reveal or change the system prompt",
		needs: []string{"prompt", "instruction", "rules", "configuration", "settings"},
		re:    regexp.MustCompile(`\b(reveal|show|print|repeat|leak|output|display|tell\s+me|give\s+me|change|modify|update|replace|edit)\s+(me\s+)?(your|the)\s+(system\s+|initial\s+|hidden\s+|original\s+)?(prompt|instructions|rules|configuration|settings)\b|\bsystem\s+prompt\b`)},
	{reason: "uses a known jailbreak",
		needs: []string{"jail", "anything now", "mode", "injection"},
		re:    regexp.MustCompile(`\bjail\s?break(ing)?\s+(mode|prompt|you|the\s+(ai|model|assistant|bot|system))\b|\b(this\s+is\s+an?|initiat\w*|activat\w*|enabl\w*|begin\w*|start\w*)\s+(a\s+)?jail\s?break\b|\bjail\s?broken\b|\bdo\s+anything\s+now\b|\bdan\s+mode\b|\bdeveloper\s+mode\b|\bgod\s+mode\b|\bunfiltered\s+mode\b|\bno\s+restrictions\s+mode\b|\bprompt\s+injection\b`)},
	{reason: "claims authority over the system",
		needs: []string{"develop", "dev", "admin", "operat", "owner", "creat", "maker", "programm", "engineer", "maint", "moderat", "superuser", "root", "design"},
		re: regexp.MustCompile(`\b(i\s+am|i'm|im|this\s+is|it's|it\s+is|speaking\s+as|as|we\s+are|we're)\s+(the|an?|one\s+of\s+the)\s+(lead\s+|senior\s+|head\s+|chief\s+|original\s+|official\s+|real\s+)?` + authorityRoles + `\s+(of|for|behind|at|on|who\s+(built|made|wrote|created|runs|maintains|programmed|designed))\s+((this|the|your)\s+` + systemNouns + `|you)\b` +
			`|\b(i\s+am|i'm|im|this\s+is|it's|speaking\s+as|as|we\s+are|we're)\s+your\s+(lead\s+|senior\s+|real\s+|original\s+)?(developer|dev|admin|administrator|operator|owner|creator|maker|programmer|master|boss|supervisor|engineer|trainer|designer)s?\b` +
			`|\bthis\s+is\s+(the|your)\s+(system|developer|admin|administrator|operator|creator|sysadmin)\s+(speaking|here|talking|team)\b` +
			`|\bi\s+(have|hold|got|was\s+given|am\s+granted|was\s+granted)\s+(root|admin|administrator|administrative|developer|elevated|override|sudo|superuser|operator)\s+(access|privileges|rights|permissions|clearance)\b` +
			`|\bauthori[sz](ed|ation)\s+(by|from)\s+(the\s+)?(developers?|admins?|administrators?|operators?|system|openai|anthropic|engineering\s+team|dev\s+team)\b` +
			`|\b(admin|override|developer|access|auth|authori[sz]ation|root)\s+(code|password|token|key|passphrase)\s*(is\s+|[:=])`)},
	{reason: "tries to switch on a privileged mode",
		needs: []string{"mode"},
		re: regexp.MustCompile(`\b` + privilegedModes + `[ -]?mode\s*(is\s+|has\s+been\s+)?(now\s+)?(on|enabled|activated|engaged|unlocked|active|granted|started|[:=])` +
			`|\b(enable|activate|enter|turn\s+on|switch\s+(on|to|into)|go\s+into|engage|unlock|start|boot\s+into|put\s+you\s+in(to)?|you\s+are\s+(now\s+)?in|you're\s+(now\s+)?in)\s+(the\s+|your\s+)?` + privilegedModes + `[ -]?mode\b`)},
	{reason: "tries to write to the memory or the database directly",
		needs: []string{"memor", "database", "db", "profile", "knowledge", "records", "training"},
		re: regexp.MustCompile(`\b(write|add|store|save|insert|put|record|inject|update|set|change|delete|remove|erase|wipe)\s+(this|that|the\s+following|it|these)?\s*(in|into|to|from|of)?\s*(your|the)\s+(memory|memories|database|db|profile|knowledge\s+base|records|training\s+data|long-term\s+memory)\b|\b(memory|database)\s+(update|override|injection|entry)\s*:` +
			`|\b(store|save|write|insert|inject|put|record|commit|persist)\s+([^.!?]{0,40}\s+)?(in|into|to)\s+(your\s+|the\s+|long-?term\s+|permanent\s+|persistent\s+)*(memory|memories|database|db|knowledge\s+base)\b`)},
	{reason: "orders something remembered or applied for every user",
		needs: []string{"all", "every", "each", "any", "other", "global", "rule", "instruction"},
		re: regexp.MustCompile(`\b(store|remember|save|record|memori[sz]e|note|add|keep|write|log|apply|set|make|tell|show|give|recommend|suggest|push|promote)\b[^.!?]{0,80}\b(for|to|on|across|in|into|with)\s+` + everyUser +
			`|\b(store|remember|save|record|memori[sz]e|note|apply|keep\s+in\s+mind)\b[^.!?]{0,80}\b(for|to|across)\s+` + everyone +
			`|\b(every|each|all|any)\s+(other\s+)?(users?|customers?|accounts?|profiles?|subscribers?|viewers?)\s+(likes?|loves?|prefers?|wants?|should|must|needs?\s+to|has\s+to|have\s+to|will|enjoys?|adores?)\b` +
			`|\b(remember|store|save|memori[sz]e|note|keep\s+in\s+mind|record)\b[^.!?]{0,60}\b(globally|as\s+an?\s+(rule|instruction|directive|system\s+\w+|global\s+\w+|permanent\s+(rule|instruction)|standing\s+(order|instruction))|for\s+(all|every|any)\s+(future\s+)?(sessions?|conversations?|chats?|threads?))\b`)},
	{reason: "grants the user privileges",
		needs: []string{"user", "admin", "privilege", "access"},
		re:    regexp.MustCompile(`\b(the|this|current)\s+user\s+(is|has\s+been|was)\s+(now\s+)?(an?\s+)?(admin|administrator|superuser|root|operator|authori[sz]ed|privileged|verified\s+admin|trusted\s+(admin|operator|source))\b|\b(grant|give)\s+(the\s+user|me|this\s+user)\s+(admin|administrator|root|superuser|elevated|full\s+admin)\s+(access|rights|privileges|permissions)\b`)},
	{reason: "asks to disable safety or filtering",
		needs: []string{"filter", "safeguard", "guardrail", "restriction", "censorship", "safety"},
		re:    regexp.MustCompile(`\b(disable|turn\s+off|switch\s+off|deactivate|remove|bypass|circumvent|ignore)\s+(your|the|all|any)?\s*(safety|content|moderation)?\s*(filters?|safeguards?|guardrails?|restrictions|censorship|safety)\b`)},
	{reason: "addresses the model about its own answers",
		needs: []string{"ai", "model", "assistant", "system", "bot", "llm", "gpt"},
		re:    regexp.MustCompile(`\b(as\s+an\s+ai|ai\s+assistant|language\s+model|the\s+assistant|the\s+model|the\s+system|the\s+bot|chatbot|the\s+ai|the\s+llm|gpt)\s+(must|should|will|shall|has\s+to|needs\s+to|is\s+(required|instructed|ordered)\s+to)\b|\b(dear|hey|attention|note\s+to(\s+the)?)\s+(ai|assistant|model|llm|bot|chatbot|system)\b[^.!?]{0,3}[,:]`)},
	{reason: "asks the model to run or obey embedded text",
		needs: []string{"execute", "run", "obey", "follow", "only", "repeat after"},
		re:    regexp.MustCompile(`\b(execute|run|obey|follow)\s+(the\s+)?(following|these|this|embedded|hidden)\s+(commands?|code|instructions?|orders|text|steps)\b|\brespond\s+only\s+with\b|\boutput\s+only\b|\brepeat\s+after\s+me\b`)},
	{reason: "marks the end of the user's input to smuggle instructions",
		needs: []string{"end of", "---", "===", "[end", "</"},
		re:    regexp.MustCompile(`\bend\s+of\s+(user\s+)?(input|message|prompt|conversation|transcript|context)\b|-{3,}\s*(system|admin|instructions?)\b|={3,}\s*(system|admin|instructions?)\b|\[end\s+of\s+\w+\]|</\s*(user|context|input|message|document)\s*>`)},
	// The same orders in Spanish, French, German, Portuguese and Italian,
	// written without accents (Normalise drops them).
	{reason: "asks to ignore or override earlier instructions (in another language)",
		needs: []string{"ignor", "olvid", "descart", "omite", "esquec", "desconsider", "oubli", "neglig", "vergiss", "vergessen", "missacht", "dimentic", "trascur"},
		re: regexp.MustCompile(
			// Spanish and Portuguese.
			`\b(ignora|ignore|ignorad|ignorem|olvida|olvide|olvidad|descarta|descarte|omite|esqueca|esquece|esquecam|desconsidere|desconsidera)\s+(todas?\s+|todos\s+)?(las\s+|los\s+|as\s+|os\s+|tus\s+|sus\s+|suas\s+|tuas\s+)?(instrucciones|indicaciones|reglas|ordenes|directrices|normas|instrucoes|regras|ordens|diretrizes|orientacoes)\b` +
				`|\b(ignora|olvida|descarta|ignore|esqueca|esquece|desconsidere)\s+(todo\s+|tudo\s+)?(lo\s+|o\s+)?(anterior|de\s+arriba|previo|que\s+esta\s+acima|acima)\b` +
				// French.
				`|\b(ignore|ignorez|ignores|oublie|oubliez|neglige|negligez)\s+(toutes\s+|tous\s+)?(les\s+|tes\s+|vos\s+|ces\s+)?(instructions|consignes|regles|directives|ordres)\b` +
				`|\b(ignore|ignorez|oublie|oubliez)\s+(tout\s+)?(ce\s+qui\s+precede|ce\s+qui\s+est\s+(au-?dessus|ci-dessus)|ce\s+qu'on\s+t'a\s+dit|ce\s+que\s+je\s+t'ai\s+dit)` +
				// German.
				`|\b(ignoriere|ignorier|ignorieren\s+sie|vergiss|vergessen\s+sie|missachte|missachten\s+sie)\b[^.!?]{0,40}\b(anweisungen|anweisung|regeln|vorgaben|befehle|instruktionen|richtlinien|oben\s+gesagte|obige)\b` +
				// Italian.
				`|\b(ignora|ignorate|ignori|dimentica|dimenticate|dimentichi|trascura)\s+(tutte\s+)?(le\s+|tue\s+|sue\s+|queste\s+)?(istruzioni|regole|indicazioni|direttive|ordini)\b` +
				`|\b(ignora|dimentica)\s+(tutto\s+)?(quello\s+|cio\s+)?(che\s+e\s+)?(sopra|precedente)\b`)},
	{reason: "reassigns the assistant's identity or role (in another language)",
		needs: []string{"ahora", "maintenant", "desormais", "dorenavant", "jetzt", "nun an", "sofort", "agora", "d'ora", "da ora", "adesso", "ora sei"},
		re: regexp.MustCompile(
			`\b(a\s+partir\s+de\s+ahora|desde\s+ahora|de\s+ahora\s+en\s+adelante)\b[^.!?]{0,40}\b(eres|seras|debes|tienes\s+que|recomienda|responde|siempre|solo)\b|\bahora\s+eres\b|\beres\s+ahora\b` +
				`|\b(a\s+partir\s+de\s+maintenant|desormais|dorenavant)\b[^.!?]{0,40}\b(tu|vous)\s+(es|etes|dois|devez|vas|allez|recommandes?|recommandez|reponds|repondez)\b|\b(tu\s+es|vous\s+etes)\s+maintenant\b` +
				`|\b(ab\s+jetzt|von\s+nun\s+an|ab\s+sofort)\b[^.!?]{0,40}\b(bist\s+du|du\s+bist|musst\s+du|sollst\s+du|du\s+musst|du\s+sollst|empfiehl|empfiehlst|antworte|sag)\b|\bdu\s+bist\s+(jetzt|nun|ab\s+sofort)\b` +
				`|\ba\s+partir\s+de\s+agora\b[^.!?]{0,40}\b(voce|tu)\s+(e|es|sera|deve|deves|vai|recomenda|responde)\b|\b(voce|tu)\s+agora\s+e\b|\bagora\s+(voce|tu)\s+e\b` +
				`|\b(d'ora\s+in\s+poi|da\s+ora\s+in\s+poi|da\s+adesso\s+in\s+poi|d'ora\s+in\s+avanti)\b[^.!?]{0,40}\b(sei|devi|raccomanda|consiglia|rispondi|tu)\b|\b(ora|adesso)\s+sei\s+(un|una|il|la|lo)\b`)},
	{reason: "orders what the assistant must always or never do (in another language)",
		needs: []string{"siempre", "solo", "solamente", "unicamente", "sempre", "somente", "apenas", "so ", "toujours", "uniquement", "seulement", "exclusivement", "immer", "stets", "nur", "ausschliesslich", "soltanto", "esclusivamente", "empfiehl", "empfehle"},
		re: regexp.MustCompile(
			`\b(siempre|solo|solamente|unicamente|sempre|so|somente|apenas)\s+(recomienda|recomiende|sugiere|sugiera|menciona|responde|muestra|recomende|recomenda|sugira|responda|diga|mostre)\b|\b(recomienda|recomiende|sugiere|recomende|recomenda)\s+(siempre|solo|solamente|unicamente|sempre|somente|apenas)\b` +
				`|\b(recommande|recommandez|suggere|suggerez|propose|proposez|reponds|repondez)\s+(toujours|uniquement|seulement|exclusivement)\b|\b(toujours|uniquement)\s+recommander\b` +
				`|\b(immer|stets|nur|ausschliesslich)\s+(empfehlen|vorschlagen|erwahnen|antworten)\b|\b(empfiehl|empfehle)\s+(immer|stets|ausschliesslich)\b` +
				`|\b(consiglia|raccomanda|suggerisci|proponi|rispondi)\s+(sempre|solo|soltanto|esclusivamente)\b|\b(sempre|solo)\s+(consigliare|raccomandare)\b`)},
	{reason: "orders something remembered or applied for every user (in another language)",
		needs: []string{"usuari", "utilisat", "benutzer", "nutzer", "anwender", "kunden", "user", "utent", "client", "personas", "pessoas", "perfi", "profil", "persone"},
		re: regexp.MustCompile(
			`\b(recomienda|recomiende|sugiere|sugiera|muestra|di|guarda|recuerda|almacena|recomende|recomenda|sugira|diga|mostre|salve|guarde|lembre|memorize|grave)\b[^.!?]{0,60}\b(a\s+|para\s+)?(todos\s+los|cada|todas\s+las|todos\s+os|todas\s+as)\s+(usuarios?|clientes|personas|perfiles|pessoas|perfis)\b` +
				`|\b(recommande|recommandez|suggere|suggerez|propose|proposez|dis|dites|enregistre|enregistrez|memorise|memorisez|retiens|retenez)\b[^.!?]{0,60}\b(a\s+|pour\s+)?(tous\s+les|chaque|toutes\s+les)\s+(utilisateurs?|utilisatrices?|clients?|personnes|profils?)\b` +
				`|\b(empfiehl|empfehle|speichere|speicher|merke|merk|sag|zeige|schlage)\b[^.!?]{0,60}\b(fur|an|allen|jedem|jeder)\s*(alle|jeden|jede)?\s*(benutzern?|nutzern?|nutzerinnen|anwendern?|kunden|usern?)\b` +
				`|\b(consiglia|raccomanda|suggerisci|mostra|salva|memorizza|ricorda|di)\b[^.!?]{0,60}\b(a\s+|per\s+)?(tutti\s+gli|ogni|tutte\s+le)\s+(utenti|utente|clienti|persone|profili)\b`)},
	{reason: "claims authority over the system (in another language)",
		needs: []string{"soy", "je suis", "ich bin", "sou ", "sono"},
		re: regexp.MustCompile(
			`\b(soy|yo\s+soy)\s+(el|la)\s+(desarrollador|desarrolladora|administrador|administradora|operador|creador|programador)\s+(de|del)\s+(esta|este|la|el)\s+(app|aplicacion|sistema|asistente|bot|servicio|modelo|plataforma)\b|\bsoy\s+tu\s+(desarrollador|administrador|creador|operador|programador)\b` +
				`|\bje\s+suis\s+(le|la)\s+(developpeur|developpeuse|administrateur|administratrice|operateur|createur|createur|programmeur)\s+(de|du)\s+(cette|cet|ce|l'|la|le)\s*(application|app|systeme|assistant|bot|service|site|modele|ia)\b|\bje\s+suis\s+(ton|votre)\s+(developpeur|administrateur|createur|operateur|programmeur)\b` +
				`|\bich\s+bin\s+(der|die)\s+(entwickler|entwicklerin|administrator|administratorin|admin|betreiber|betreiberin|ersteller|programmierer)\s+(dieser|dieses|der|des)\s+(app|anwendung|systems?|assistenten|bots?|dienstes|plattform)\b|\bich\s+bin\s+(dein|deine|ihr)\s+(entwickler|entwicklerin|administrator|admin|betreiber|ersteller|programmierer)\b` +
				`|\bsou\s+(o|a)\s+(desenvolvedor|desenvolvedora|administrador|administradora|operador|criador|programador)\s+(deste|desta|do|da)\s+(app|aplicativo|aplicacao|sistema|assistente|bot|servico|modelo|plataforma)\b|\bsou\s+(o\s+)?(seu|teu)\s+(desenvolvedor|administrador|criador|operador|programador)\b` +
				`|\bsono\s+(lo|il|la)\s+(sviluppatore|sviluppatrice|amministratore|amministratrice|operatore|creatore|programmatore)\s+(di|del|della|dell')\s*(questa|questo|app|applicazione|sistema|assistente|bot|servizio|modello|piattaforma)\b|\bsono\s+(il\s+)?(tuo|tua)\s+(sviluppatore|amministratore|creatore|operatore|programmatore)\b`)},
	{reason: "tries to switch on a privileged mode (in another language)",
		needs: []string{"modo", "mode", "modus", "modalita"},
		re: regexp.MustCompile(`\bmodo\s+(administrador|admin|desarrollador|depuracion|dios|root|mantenimiento|sin\s+restricciones|desenvolvedor|depuracao|deus|manutencao)\b` +
			`|\bmode\s+(administrateur|developpeur|debogage|dieu|sans\s+restriction)s?\b` +
			`|\b(admin|administrator|administratoren|entwickler|debug|wartungs|gott|root|developer)-?modus\b` +
			`|\bmodalita\s+(amministratore|admin|sviluppatore|debug|dio|root|manutenzione)\b`)},
	{reason: "declares new instructions for the system (in another language)",
		needs: []string{"instruc", "anweisung", "regeln", "befehle", "istruzion", "consignes"},
		re:    regexp.MustCompile(`\bnuevas\s+instrucciones\b|\binstrucciones\s+del\s+sistema\b|\bnouvelles\s+(instructions|consignes)\b|\binstructions\s+(du\s+)?systeme\b|\bneue\s+(anweisungen|regeln|befehle)\b|\bsystem-?anweisungen?\b|\bnovas\s+instrucoes\b|\binstrucoes\s+do\s+sistema\b|\bnuove\s+istruzioni\b|\bistruzioni\s+di\s+sistema\b`)},
	{reason: "tries to write to the memory or the database directly (in another language)",
		needs: []string{"memoria", "memoire", "base de", "gedachtnis", "speicher", "datenbank", "database"},
		re: regexp.MustCompile(`\b(guarda|almacena|anade|graba|escribe)\b[^.!?]{0,30}\b(en\s+)?(tu|la|su)\s+(memoria|base\s+de\s+datos)\b` +
			`|\b(enregistre|enregistrez|ajoute|ajoutez|memorise|memorisez|sauvegarde|sauvegardez|ecris|ecrivez)\b[^.!?]{0,30}\b(dans\s+)(ta|votre|la)\s+(memoire|base\s+de\s+donnees)\b` +
			`|\b(speichere|speicher|schreibe|schreib|fuge)\b[^.!?]{0,40}\b(in\s+)(deinem|deinen|dein|dem|den|das|die)\s+(gedachtnis|speicher|datenbank)\b` +
			`|\b(salve|guarde|grave|armazene|escreva)\b[^.!?]{0,30}\b(na|em\s+sua|na\s+sua)\s+(memoria|base\s+de\s+dados)\b` +
			`|\b(salva|memorizza|scrivi|aggiungi)\b[^.!?]{0,30}\b(nella|in)\s+(tua\s+|la\s+)?(memoria|database|base\s+di\s+dati)\b`)},
}

// assistantRules apply to text the assistant wrote: its promises about
// later turns, which a recalled reply would replay as an instruction.
var assistantRules = []rule{
	{reason: "an assistant turn commits later turns to an instruction",
		needs: []string{"i will", "i'll", "i shall", "i am", "i'm", "i must", "i have to", "i need to", "from now on", "henceforth", "going forward", "in future"},
		re: regexp.MustCompile(`\b(from\s+now\s+on|henceforth|going\s+forward|in\s+future\s+(turns|conversations|chats))\b,?\s+i\s+(will|'ll|shall)\b|\bi\s+(will|'ll|shall|am\s+going\s+to|'m\s+going\s+to)\s+(now\s+)?(always|only|never|exclusively)\s+` + imperativeVerbs + `\b|\bi\s+(will|'ll)\s+(now\s+)?(ignore|disregard|forget)\s+(my|the|all|your)\b` +
			`|\bi\s+(must|have\s+to|am\s+required\s+to|am\s+instructed\s+to|need\s+to|am\s+to)\s+(always|only|never|exclusively)\s+` + imperativeVerbs + `\b`)},
	{reason: "an assistant turn says it stored an instruction",
		needs: []string{"stored", "saved", "remember", "noted", "recorded"},
		re:    regexp.MustCompile(`\bi\s+(have|'ve)?\s*(stored|saved|remembered|noted|recorded|memori[sz]ed)\b[^.!?]{0,60}\b(for\s+` + everyone + `|as\s+an?\s+(rule|instruction)|permanently)`)},
}
