package fnenv

import (
	"fmt"

	"github.com/hookline/hookline/internal/domain"
)

// Mail is the SES identity hookline's e-mails are sent from
// (hookline.Props.NotifyFrom), in the environments of the api function
// (verification e-mails) and the replay function (notices). Without it
// no e-mail is sent, and naming a notification address answers 409.
type Mail struct {
	// From (HOOKLINE_NOTIFY_FROM) is the sending address, of a verified
	// SES identity. Empty: no e-mail.
	From string
	// ConfigurationSet (HOOKLINE_NOTIFY_CONFIGURATION_SET) is the SES
	// configuration set of every send. Empty: none.
	ConfigurationSet string
}

const (
	varNotifyFrom             = "HOOKLINE_NOTIFY_FROM"
	varNotifyConfigurationSet = "HOOKLINE_NOTIFY_CONFIGURATION_SET"
)

// vars renders m into v, when it has a sender.
func (m Mail) vars(v map[string]string) {
	if m.From == "" {
		return
	}
	v[varNotifyFrom] = m.From
	if m.ConfigurationSet != "" {
		v[varNotifyConfigurationSet] = m.ConfigurationSet
	}
}

// loadMail reads what vars wrote: the sender a bare e-mail address.
func loadMail(getenv func(string) string) (Mail, error) {
	m := Mail{From: getenv(varNotifyFrom), ConfigurationSet: getenv(varNotifyConfigurationSet)}
	if m.From == "" {
		return m, nil
	}
	if !domain.BareAddress(m.From) {
		return m, fmt.Errorf("%s: %q is not a bare e-mail address", varNotifyFrom, m.From)
	}
	return m, nil
}
