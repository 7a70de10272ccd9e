// SPDX-License-Identifier: GPL-2.0
/*
 * pwm-sim: a simulated PWM chip for the swift-haptics kernel VM rig.
 *
 * Registers one platform device "pwm-sim" with a pwm_chip of `channels`
 * channels (module parameter, default 4). apply() stores the requested state
 * and get_state() returns it, so /sys/class/pwm/pwmchipN/{export,unexport}
 * and pwmM/{period,duty_cycle,polarity,enable} behave like real hardware
 * that does exactly what it is told; /sys/kernel/debug/pwm shows the state.
 * Written against Debian's 6.1 kernel (get_state returns int there).
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/pwm.h>
#include <linux/slab.h>

static unsigned int channels = 4;
module_param(channels, uint, 0444);
MODULE_PARM_DESC(channels, "number of PWM channels (1-64, default 4)");

struct pwm_sim {
	struct pwm_chip chip;
	struct mutex lock;
	struct pwm_state state[];
};

static struct pwm_sim *to_sim(struct pwm_chip *chip)
{
	return container_of(chip, struct pwm_sim, chip);
}

static int pwm_sim_apply(struct pwm_chip *chip, struct pwm_device *pwm,
			 const struct pwm_state *state)
{
	struct pwm_sim *sim = to_sim(chip);

	mutex_lock(&sim->lock);
	sim->state[pwm->hwpwm] = *state;
	mutex_unlock(&sim->lock);
	return 0;
}

static int pwm_sim_get_state(struct pwm_chip *chip, struct pwm_device *pwm,
			     struct pwm_state *state)
{
	struct pwm_sim *sim = to_sim(chip);

	mutex_lock(&sim->lock);
	*state = sim->state[pwm->hwpwm];
	mutex_unlock(&sim->lock);
	return 0;
}

static const struct pwm_ops pwm_sim_ops = {
	.apply = pwm_sim_apply,
	.get_state = pwm_sim_get_state,
	.owner = THIS_MODULE,
};

static int pwm_sim_probe(struct platform_device *pdev)
{
	struct pwm_sim *sim;

	sim = devm_kzalloc(&pdev->dev, struct_size(sim, state, channels), GFP_KERNEL);
	if (!sim)
		return -ENOMEM;
	mutex_init(&sim->lock);
	sim->chip.dev = &pdev->dev;
	sim->chip.ops = &pwm_sim_ops;
	sim->chip.npwm = channels;
	return devm_pwmchip_add(&pdev->dev, &sim->chip);
}

static struct platform_driver pwm_sim_driver = {
	.probe = pwm_sim_probe,
	.driver = { .name = "pwm-sim" },
};

static struct platform_device *pwm_sim_device;

static int __init pwm_sim_init(void)
{
	int ret;

	if (channels < 1 || channels > 64)
		return -EINVAL;
	ret = platform_driver_register(&pwm_sim_driver);
	if (ret)
		return ret;
	pwm_sim_device = platform_device_register_simple("pwm-sim", -1, NULL, 0);
	if (IS_ERR(pwm_sim_device)) {
		platform_driver_unregister(&pwm_sim_driver);
		return PTR_ERR(pwm_sim_device);
	}
	return 0;
}

static void __exit pwm_sim_exit(void)
{
	platform_device_unregister(pwm_sim_device);
	platform_driver_unregister(&pwm_sim_driver);
}

module_init(pwm_sim_init);
module_exit(pwm_sim_exit);
MODULE_DESCRIPTION("Simulated PWM chip for the swift-haptics VM rig");
MODULE_LICENSE("GPL");
