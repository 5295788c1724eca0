package model

// PollQuestionModel is one question of a Poll alert.
type PollQuestionModel struct {
	ID      int               `json:"id,omitempty" minimum:"1" maximum:"1000" doc:"Question id, unique within the alert; the lowest unused ids are assigned in order when absent." example:"1"`
	Text    string            `json:"text" minLength:"1" maxLength:"500" example:"Are you safe?"`
	Options []PollOptionModel `json:"options" minItems:"2" maxItems:"10"`
}

// PollOptionModel is one answer a recipient may choose.
type PollOptionModel struct {
	ID       int    `json:"id,omitempty" minimum:"1" maximum:"100000" doc:"Option id, unique within the alert; assigned in order when absent." example:"1"`
	Text     string `json:"text" minLength:"1" maxLength:"200" example:"Yes, I am safe"`
	Severity string `json:"severity,omitempty" enum:"None,Low,Medium,High,Critical" doc:"How serious this answer is, for the severity assessment." example:"None"`
}

// PollOptionResult counts the answers of one option.
type PollOptionResult struct {
	OptionID int     `json:"optionId" example:"1"`
	Text     string  `json:"text" example:"Yes, I am safe"`
	Count    int64   `json:"count" example:"120"`
	Percent  float64 `json:"percent" doc:"Share of the question's answers, 0-100." example:"80"`
}

// PollOptionResults are the answers of a question per option.
type PollOptionResults struct {
	Options []PollOptionResult `json:"options"`
}

// PollQuestionResults are the answers to one question.
type PollQuestionResults struct {
	QuestionID   int               `json:"questionId" example:"1"`
	Text         string            `json:"text" example:"Are you safe?"`
	Responded    int64             `json:"responded" doc:"Recipients who answered." example:"150"`
	NotResponded int64             `json:"notResponded" doc:"Recipients who did not answer (yet)." example:"50"`
	Results      PollOptionResults `json:"results"`
}

// PollResults are the answers to every question of a Poll alert.
type PollResults struct {
	Questions []PollQuestionResults `json:"questions"`
	Summary   SurveySummary         `json:"summary"`
	Severity  *SeverityAssessment   `json:"severity,omitempty" doc:"Present when options carry severities."`
}

// SurveySummary sums up a poll.
type SurveySummary struct {
	Recipients   int64   `json:"recipients" doc:"Recipients of the alert." example:"200"`
	Responded    int64   `json:"responded" doc:"Recipients who answered at least one question." example:"150"`
	ResponseRate float64 `json:"responseRate" doc:"Responded / recipients, 0-100." example:"75"`
}

// SeverityAssessment counts answers by the severity of the chosen option.
type SeverityAssessment struct {
	Highest   string                               `json:"highest" enum:"None,Low,Medium,High,Critical" doc:"The most serious severity any recipient chose." example:"High"`
	Responses []SeverityAssessment_responses_inner `json:"responses"`
}

// SeverityAssessment_responses_inner is the count of one severity (the name
// is the interface document's).
//
//nolint:revive // the schema name is fixed by the interface document.
type SeverityAssessment_responses_inner struct { //nolint:stylecheck
	Severity string `json:"severity" enum:"None,Low,Medium,High,Critical" example:"None"`
	Count    int64  `json:"count" example:"140"`
}
