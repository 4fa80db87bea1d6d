package urls

import "net/url"

// The APF what-if (issue 46, handlers/whatif): a draft of FlowSchemas and
// priority levels replayed over the recorded traffic beside the current
// configuration, as a background job; with no draft, the backtest. "-" is no
// priority level name, so the page cannot shadow an object.
const (
	WhatIf            = priorityLevels + "/-/whatif"
	WhatIfJobRoute    = WhatIf + "/jobs/:job"
	WhatIfCancelRoute = WhatIfJobRoute + "/cancel"
	// WhatIfBacktest starts the backtest over the last day from a priority
	// level's page (the level's name is the form's "level", where it
	// returns).
	WhatIfBacktest = WhatIf + "/backtest"
)

// priorityLevels is the priority levels' list (List(kube.PriorityLevels)).
const priorityLevels = "/prioritylevels"

// WhatIfJob is the what-if job id: its progress, then its result.
func WhatIfJob(id string) string { return WhatIf + "/jobs/" + url.PathEscape(id) }

// WhatIfCancel cancels the what-if job id (a POST).
func WhatIfCancel(id string) string { return WhatIfJob(id) + "/cancel" }
