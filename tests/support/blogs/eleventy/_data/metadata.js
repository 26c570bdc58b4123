export default {
	title: "Eleventy notes",
	url: "https://eleventy.example.org/",
	language: "en",
	description: "I am writing about my experiences as a naval navel-gazer.",
	author: {
		name: "Your Name Here",
		email: "youremailaddress@example.com",
		url: "https://example.com/about-me/"
	}
}
