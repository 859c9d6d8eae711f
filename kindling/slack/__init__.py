"""The Slack app: installation per organization, Slack's signed requests, `/kindness`, the Recognize shortcut and the App Home."""
